package io.ehrelay.hessian;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The provider-api contract suite over Hessian/HTTP on 127.0.0.1. */
class HessianContractTest extends ReplicationContractTest {

    @Override
    protected TransportFixture fixture() {
        return new HessianFixture();
    }
}
