package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Properties;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.testing.TestProperties;
import org.junit.jupiter.api.Test;

/** Renamed provider properties: the old names still work; both names at once fail. */
class HessianRenamedPropertiesTest {

    private static HessianSettings read(String... kv) {
        Properties p = TestProperties.of(kv);
        PropertyReader r = new PropertyReader("HessianCacheManagerPeerProviderFactory", p);
        HessianSettings s = HessianSettings.read(r, NodeConfig.read(r, "peers"));
        r.rejectUnknown();
        return s;
    }

    @Test
    void callTimeoutMillis_isReadUnderItsOldNameToo() {
        assertThat(read("readTimeoutMillis", "3000").callTimeoutMillis).isEqualTo(3000);
        assertThat(read("callTimeoutMillis", "4000").callTimeoutMillis).isEqualTo(4000);
        assertThat(read().callTimeoutMillis).isEqualTo(30_000);
    }

    @Test
    void bothNames_fail() {
        assertThatThrownBy(() -> read("readTimeoutMillis", "3000", "callTimeoutMillis", "4000"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("readTimeoutMillis").hasMessageContaining("callTimeoutMillis");
    }
}
