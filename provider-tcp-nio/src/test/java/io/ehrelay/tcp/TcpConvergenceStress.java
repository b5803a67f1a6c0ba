package io.ehrelay.tcp;

import io.ehrelay.contract.ConvergenceStress;
import io.ehrelay.contract.TransportFixture;

/** The convergence profile over TCP (run by {@code -Pconvergence}, not by the default build). */
class TcpConvergenceStress extends ConvergenceStress {
    @Override
    protected TransportFixture fixture() {
        return TcpContractTest.FIXTURE;
    }
}
