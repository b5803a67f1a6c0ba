package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Properties;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.testing.TestProperties;
import org.junit.jupiter.api.Test;

/** Renamed provider properties: the old names still work; both names at once fail. */
class RmiRenamedPropertiesTest {

    private static RmiSettings read(String... kv) {
        Properties p = TestProperties.of(kv);
        PropertyReader r = new PropertyReader("RmiCacheManagerPeerProviderFactory", p);
        RmiSettings s = RmiSettings.read(r, NodeConfig.read(r, "rmiUrls"));
        r.rejectUnknown();
        return s;
    }

    @Test
    void retryMaxMillis_andCallTimeoutMillis_areReadUnderTheirOldNamesToo() {
        RmiSettings s = read("lookupRetryMaxMillis", "800", "clientSocketTimeoutMillis", "3000");
        assertThat(s.retryMaxMillis).isEqualTo(800);
        assertThat(s.callTimeoutMillis).isEqualTo(3000);
        RmiSettings t = read("retryMaxMillis", "700", "callTimeoutMillis", "4000");
        assertThat(t.retryMaxMillis).isEqualTo(700);
        assertThat(t.callTimeoutMillis).isEqualTo(4000);
        assertThat(read().callTimeoutMillis).isEqualTo(10_000);
    }

    @Test
    void bothNames_fail() {
        assertThatThrownBy(() -> read("clientSocketTimeoutMillis", "3000", "callTimeoutMillis", "4000"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("clientSocketTimeoutMillis").hasMessageContaining("callTimeoutMillis");
    }
}
