package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import io.ehrelay.contract.TestKeyStores;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.config.PropertyReader;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HTTPS with client certificates on the listener ({@code tlsTrustStore}, {@code tlsClientAuth}): nodes whose
 * certificates the listeners trust replicate (with {@code unauthenticatedPeers} admitting no host at all: the
 * certificate authenticates them); a node without a certificate, or with one the listener does not trust, is
 * refused in the TLS handshake, counted in {@code unauthorized}, and nothing it sends is applied.
 */
@Timeout(120)
class HessianTlsClientAuthTest {

    private static final String PASSWORD = TestKeyStores.PASSWORD;
    private static Path cluster;
    private static Path stranger;

    @BeforeAll
    static void keyStores() throws Exception {
        cluster = TestKeyStores.selfSigned("client-auth-cluster", "127.0.0.1", "ip:127.0.0.1");
        stranger = TestKeyStores.selfSigned("client-auth-stranger", "127.0.0.1", "ip:127.0.0.1");
    }

    /** Listeners serve HTTPS with the cluster's key and trust the cluster's certificate only. */
    private static TransportFixture fixture(String providerTls) {
        return HessianContractTest.FIXTURE
                .withListenerProperties("hostName=127.0.0.1, port=0, tlsKeyStore=" + cluster + ", tlsKeyStorePassword="
                        + PASSWORD + ", tlsTrustStore=" + cluster + ", tlsTrustStorePassword=" + PASSWORD)
                .withExtraProviderProperties(providerTls);
    }

    private static String trustCluster() {
        return "tlsTrustStore=" + cluster + ", tlsTrustStorePassword=" + PASSWORD;
    }

    @Test
    void nodesWithTrustedCertificates_replicate_othersAreRefusedInTheHandshakeAndCounted() {
        // unauthenticatedPeers names a host that is not this one: only the certificate can let the members in
        TransportFixture members = fixture("tlsKeyStore=" + cluster + ", tlsKeyStorePassword=" + PASSWORD + ", "
                + trustCluster() + ", unauthenticatedPeers=192.0.2.1");
        try (ContractCluster nodes = new ContractCluster(members);
             ContractCluster noCertificate = new ContractCluster(fixture(trustCluster()));
             ContractCluster untrusted = new ContractCluster(fixture("tlsKeyStore=" + stranger
                     + ", tlsKeyStorePassword=" + PASSWORD + ", " + trustCluster()))) {
            CacheManager a = nodes.start("cert-a");
            CacheManager b = nodes.start("cert-b");
            assertThat(nodes.endpoint(b)).startsWith("https://127.0.0.1:");
            assertThat(nodes.node(b).transport().peerAuthentication())
                    .isEqualTo("TLS client certificates (tlsClientAuth=true)");
            a.getCache("sync").put(new Element("k", "with a certificate"));
            assertThat(b.getCache("sync").get("k").getObjectValue()).isEqualTo("with a certificate");
            b.getCache("async").put(new Element("k2", "back"));
            Await.until(() -> a.getCache("async").get("k2") != null, () -> "async over HTTPS with client certificates");
            Jmx jb = nodes.jmx(b);
            assertThat(jb.managerCount("unauthorized")).isZero();

            String url = nodes.endpoint(b);
            // no certificate at all
            CacheManager anonymous = noCertificate.start("no-cert", "peers=" + url);
            for (int i = 0; i < 5; i++) {
                anonymous.getCache("async").put(new Element("anon" + i, "x"));
            }
            Jmx janon = noCertificate.jmx(anonymous);
            Await.until(() -> janon.cacheCount("async", "failed") >= 1,
                    () -> "the node without a certificate: its sends fail");
            Await.until(() -> jb.managerCount("unauthorized") >= 1,
                    () -> "refused handshake counted: " + jb.managerCount("unauthorized"));
            long afterAnonymous = jb.managerCount("unauthorized");
            // a certificate the listener does not trust
            CacheManager stranger = untrusted.start("stranger", "peers=" + url);
            for (int i = 0; i < 5; i++) {
                stranger.getCache("async").put(new Element("strange" + i, "x"));
            }
            Jmx jstranger = untrusted.jmx(stranger);
            Await.until(() -> jstranger.cacheCount("async", "failed") >= 1,
                    () -> "the node with an untrusted certificate: its sends fail");
            Await.until(() -> jb.managerCount("unauthorized") > afterAnonymous,
                    () -> "refused handshake counted: " + jb.managerCount("unauthorized"));
            for (int i = 0; i < 5; i++) {
                assertThat(b.getCache("async").get("anon" + i)).isNull();
                assertThat(b.getCache("async").get("strange" + i)).isNull();
            }
            // the members still replicate
            a.getCache("sync").put(new Element("after", "refusals"));
            assertThat(b.getCache("sync").get("after")).isNotNull();
            System.out.printf("[hessian] client certificates: refused handshakes counted in unauthorized: %d%n",
                    jb.managerCount("unauthorized"));
        }
    }

    @Test
    void withClusterSecretAndToken_peerAuthenticationNamesAllThree() {
        TransportFixture members = fixture("tlsKeyStore=" + cluster + ", tlsKeyStorePassword=" + PASSWORD + ", "
                + trustCluster() + ", clusterSecret=correct-horse-battery-staple, clusterToken=s3cret-cluster-token-0123");
        try (ContractCluster nodes = new ContractCluster(members)) {
            CacheManager a = nodes.start("all-a");
            CacheManager b = nodes.start("all-b");
            assertThat(nodes.node(a).transport().peerAuthentication()).isEqualTo("TLS client certificates "
                    + "(tlsClientAuth=true), the cluster secret (clusterSecret) and the cluster token (clusterToken)");
            a.getCache("sync").put(new Element("k", "v"));
            assertThat(b.getCache("sync").get("k")).isNotNull();
        }
    }

    @Test
    void aStalledTlsHandshake_isDroppedAfterRequestReadMillis_andHoldsNoThread() throws Exception {
        TransportFixture quick = HessianContractTest.FIXTURE
                .withListenerProperties("hostName=127.0.0.1, port=0, tlsKeyStore=" + cluster + ", tlsKeyStorePassword="
                        + PASSWORD + ", tlsTrustStore=" + cluster + ", tlsTrustStorePassword=" + PASSWORD
                        + ", requestReadMillis=1000")
                .withExtraProviderProperties("tlsKeyStore=" + cluster + ", tlsKeyStorePassword=" + PASSWORD + ", "
                        + trustCluster());
        try (ContractCluster nodes = new ContractCluster(quick)) {
            CacheManager a = nodes.start("stall-a");
            CacheManager b = nodes.start("stall-b");
            int port = URI.create(nodes.endpoint(b)).getPort();
            List<Socket> stalled = new ArrayList<>();
            try {
                long start = System.nanoTime();
                for (int i = 0; i < 8; i++) {
                    Socket s = new Socket();
                    stalled.add(s);
                    s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
                    // the start of a TLS record holding a ClientHello, then nothing
                    s.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01});
                    s.getOutputStream().flush();
                }
                a.getCache("sync").put(new Element("k", "during the stall"));
                assertThat(b.getCache("sync").get("k")).isNotNull();
                for (Socket s : stalled) {
                    s.setSoTimeout(10_000);
                    int read;
                    try {
                        read = s.getInputStream().read();
                    } catch (IOException reset) {
                        read = -1;
                    }
                    assertThat(read).as("the node closed the stalled handshake").isEqualTo(-1);
                }
                long millis = (System.nanoTime() - start) / 1_000_000;
                System.out.printf("[hessian] 8 stalled TLS handshakes closed after %d ms (requestReadMillis=1000)%n",
                        millis);
                assertThat(millis).isBetween(900L, 5000L);
                // the watchdog closes a connection, then counts it: the count may trail the close a little
                Await.until(Duration.ofSeconds(5), () -> nodes.jmx(b).managerCount("slowRequests") >= 8,
                        () -> "slowRequests " + nodes.jmx(b).managerCount("slowRequests"));
                assertThat(nodes.jmx(b).managerCount("slowRequests")).isEqualTo(8);
                assertThat(nodes.jmx(b).managerCount("unauthorized")).isZero();
            } finally {
                for (Socket s : stalled) {
                    s.close();
                }
            }
        }
    }

    private static HessianListenerSettings listener(String... properties) {
        Properties p = new Properties();
        for (String kv : properties) {
            int eq = kv.indexOf('=');
            p.setProperty(kv.substring(0, eq), kv.substring(eq + 1));
        }
        PropertyReader r = new PropertyReader("HessianCacheManagerPeerListenerFactory", p);
        HessianListenerSettings s = HessianListenerSettings.read(r);
        r.rejectUnknown();
        return s;
    }

    @Test
    void configuration_clientCertificatesNeedHttps_andATrustStore_whichTurnsThemOn() {
        String key = "tlsKeyStore=" + cluster;
        String trust = "tlsTrustStore=" + cluster;
        HessianListenerSettings on = listener(key, trust);
        assertThat(on.https()).isTrue();
        assertThat(on.clientAuth).isTrue();
        assertThat(on.tlsAuthenticates()).isTrue();
        HessianListenerSettings off = listener(key, "tlsClientAuth=false");
        assertThat(off.tlsAuthenticates()).isFalse();
        HessianListenerSettings plain = listener();
        assertThat(plain.https()).isFalse();
        assertThat(plain.tlsAuthenticates()).isFalse();
        assertThat(plain.httpThreads).isEqualTo(4);
        assertThat(plain.maxHttpThreads).isEqualTo(64);
        assertThat(plain.requestReadMillis).isEqualTo(10_000);

        assertThatThrownBy(() -> listener(trust)).isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("tlsTrustStore").hasMessageContaining("HTTPS listener only");
        assertThatThrownBy(() -> listener("tlsClientAuth=true")).isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("tlsClientAuth").hasMessageContaining("without tlsKeyStore");
        assertThatThrownBy(() -> listener("tlsClientAuth=false")).isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("tlsClientAuth");
        // a key store alone: server TLS, as before client certificates existed
        assertThat(listener(key).tlsAuthenticates()).isFalse();
        assertThatThrownBy(() -> listener(key, "tlsClientAuth=true")).isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("tlsTrustStore");
        assertThatThrownBy(() -> listener(key, trust, "tlsClientAuth=false"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("tlsTrustStore");
        assertThatThrownBy(() -> listener("httpThreads=8", "maxHttpThreads=4"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("maxHttpThreads");
        assertThat(listener("httpThreads=100").maxHttpThreads).isEqualTo(100);
    }
}
