package io.ehrelay.rmi;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The provider-api contract suite over Java RMI on 127.0.0.1. */
class RmiContractTest extends ReplicationContractTest {

    @Override
    protected TransportFixture fixture() {
        return new RmiFixture();
    }
}
