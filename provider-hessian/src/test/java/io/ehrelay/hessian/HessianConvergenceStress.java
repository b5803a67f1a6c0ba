package io.ehrelay.hessian;

import io.ehrelay.contract.ConvergenceStress;
import io.ehrelay.contract.TransportFixture;

/** The convergence profile over Hessian (run by {@code -Pconvergence}, not by the default build). */
class HessianConvergenceStress extends ConvergenceStress {
    @Override
    protected TransportFixture fixture() {
        return HessianContractTest.FIXTURE;
    }
}
