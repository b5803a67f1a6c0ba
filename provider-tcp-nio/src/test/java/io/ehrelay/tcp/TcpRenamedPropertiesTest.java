package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Properties;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.testing.TestProperties;
import org.junit.jupiter.api.Test;

/** Renamed provider properties: the old names still work; both names at once fail. */
class TcpRenamedPropertiesTest {

    private static TcpSettings read(String... kv) {
        Properties p = TestProperties.of(kv);
        PropertyReader r = new PropertyReader("TcpCacheManagerPeerProviderFactory", p);
        TcpSettings s = TcpSettings.read(r, NodeConfig.read(r, "peers"));
        r.rejectUnknown();
        return s;
    }

    @Test
    void retryMaxMillis_isReadUnderItsOldNameToo() {
        assertThat(read("retryMaxMillis", "700").retryMaxMillis).isEqualTo(700);
        assertThat(read("reconnectBackoffMaxMillis", "800").retryMaxMillis).isEqualTo(800);
        assertThat(read().retryMaxMillis).isEqualTo(5000);
    }

    @Test
    void bothNames_fail() {
        assertThatThrownBy(() -> read("reconnectBackoffMaxMillis", "800", "retryMaxMillis", "700"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("reconnectBackoffMaxMillis").hasMessageContaining("retryMaxMillis");
    }
}
