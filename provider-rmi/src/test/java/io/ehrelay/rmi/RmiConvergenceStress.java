package io.ehrelay.rmi;

import io.ehrelay.contract.ConvergenceStress;
import io.ehrelay.contract.TransportFixture;

/** The convergence profile over RMI (run by {@code -Pconvergence}, not by the default build). */
class RmiConvergenceStress extends ConvergenceStress {
    @Override
    protected TransportFixture fixture() {
        return RmiContractTest.FIXTURE;
    }
}
