package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import org.jgroups.Version;
import org.junit.jupiter.api.Test;

/**
 * This module's tests run twice, on the JGroups it is compiled against and on the newest line (see the pom):
 * this checks that each run really has the JGroups it claims, and that the object-message guard takes the
 * route that JGroups line needs.
 */
class JGroupsVersionTest {

    @Test
    void runsOnTheJGroupsTheBuildChose_andGuardsItsWay() {
        String expected = System.getProperty("ehrelay.expectJGroups");
        assertThat(expected).as("system property ehrelay.expectJGroups (set in the pom)").isNotBlank();
        assertThat(Version.printVersion()).isEqualTo(expected.replace(".Final", ""));
        boolean before55 = Version.major == 5 && Version.minor < 5;
        assertThat(ObjectMessageGuard.perChannel()).as("per-channel message factory (5.3/5.4)").isEqualTo(before55);
    }
}
