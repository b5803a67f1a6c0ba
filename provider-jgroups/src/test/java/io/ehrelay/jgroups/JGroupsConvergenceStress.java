package io.ehrelay.jgroups;

import io.ehrelay.contract.ConvergenceStress;
import io.ehrelay.contract.TransportFixture;

/** The convergence profile over JGroups' TCP stack (run by {@code -Pconvergence}, not by the default build). */
class JGroupsConvergenceStress extends ConvergenceStress {
    @Override
    protected TransportFixture fixture() {
        return JGroupsFixtures.tcp();
    }
}
