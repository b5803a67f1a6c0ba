package io.ehrelay.jgroups;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The provider-api contract suite over JGroups' TCP stack (TCPPING) on 127.0.0.1. */
class JGroupsTcpContractTest extends ReplicationContractTest {

    @Override
    protected TransportFixture fixture() {
        return JGroupsFixtures.tcp();
    }
}
