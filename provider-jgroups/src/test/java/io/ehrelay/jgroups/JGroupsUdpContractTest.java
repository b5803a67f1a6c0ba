package io.ehrelay.jgroups;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The provider-api contract suite over JGroups' UDP stack, multicast on the loopback interface (TTL 0). */
class JGroupsUdpContractTest extends ReplicationContractTest {

    @Override
    protected TransportFixture fixture() {
        return JGroupsFixtures.udp();
    }
}
