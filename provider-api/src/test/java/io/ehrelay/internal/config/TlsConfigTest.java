package io.ehrelay.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.Properties;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.contract.TestKeyStores;
import io.ehrelay.testing.TestProperties;
import org.junit.jupiter.api.Test;

class TlsConfigTest {

    private static PropertyReader reader(String... kv) {
        Properties p = TestProperties.of(kv);
        return new PropertyReader("f", p);
    }

    @Test
    void noStores_isNotConfigured() {
        TlsConfig s = TlsConfig.read(reader());
        assertThat(s.configured()).isFalse();
        assertThat(s.hasKeyStore()).isFalse();
    }

    @Test
    void stores_buildAContext() throws Exception {
        Path store = TestKeyStores.selfSigned("tls-settings", "node", "ip:127.0.0.1");
        PropertyReader r = reader("tlsKeyStore", store.toString(), "tlsKeyStorePassword", TestKeyStores.PASSWORD,
                "tlsTrustStore", store.toString(), "tlsTrustStorePassword", TestKeyStores.PASSWORD);
        TlsConfig s = TlsConfig.read(r);
        r.rejectUnknown();
        assertThat(s.configured()).isTrue();
        assertThat(s.context().getProtocol()).isEqualTo("TLS");
    }

    @Test
    void missingStoreFile_namesTheProperty() {
        assertThatThrownBy(() -> TlsConfig.read(reader("tlsTrustStore", "/no/such/store.p12")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("'tlsTrustStore'")
                .hasMessageContaining("/no/such/store.p12");
    }

    @Test
    void keyStoreOnly_leavesTrustStoreUnknown() {
        PropertyReader r = reader("tlsTrustStore", "/x.p12");
        TlsConfig.readKeyStore(r);
        assertThatThrownBy(r::rejectUnknown).hasMessageContaining("[tlsTrustStore]");
    }
}
