package io.ehrelay.tcp;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The provider-api contract suite over real TCP sockets on 127.0.0.1. */
class TcpContractTest extends ReplicationContractTest {

    @Override
    protected TransportFixture fixture() {
        return new TcpFixture();
    }
}
