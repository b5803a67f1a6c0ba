package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.TestKeyStores;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.config.TlsConfig;
import io.ehrelay.internal.config.TlsStores;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.testing.CacheKeys;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.event.CacheEventListenerAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code tls=true} on TCP, with real nodes on 127.0.0.1: nodes whose certificates the others trust replicate; a
 * plain node, a node with an untrusted certificate, a client without one and plain-text junk are refused and
 * counted in {@code unauthorized}; with {@code tlsClientAuth=false} the host gate applies; the handshake, stall and
 * buffer bounds hold over TLS.
 */
@Timeout(120)
class TcpTlsTest {

    private static Path keyA;
    private static Path keyB;
    private static Path keyRogue;
    /** The certificates of a and b (not the rogue's). */
    private static Path trust;

    private final ContractCluster cluster = new ContractCluster(TcpContractTest.FIXTURE);

    @BeforeAll
    static void keyStores() throws Exception {
        keyA = TestKeyStores.selfSigned("tcp-a", "ehrelay-a", null);
        keyB = TestKeyStores.selfSigned("tcp-b", "ehrelay-b", null);
        keyRogue = TestKeyStores.selfSigned("tcp-rogue", "ehrelay-rogue", null);
        trust = keyA.resolveSibling("tcp-trust.p12");
        KeyStore certificates = KeyStore.getInstance("PKCS12");
        certificates.load(null, null);
        for (Path p : List.of(keyA, keyB)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            try (InputStream in = Files.newInputStream(p)) {
                ks.load(in, TestKeyStores.PASSWORD.toCharArray());
            }
            certificates.setCertificateEntry(p.getFileName().toString(), ks.getCertificate("node"));
        }
        try (OutputStream out = Files.newOutputStream(trust)) {
            certificates.store(out, TestKeyStores.PASSWORD.toCharArray());
        }
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    private static String tls(Path key) {
        return "tls=true, tlsKeyStore=" + key + ", tlsKeyStorePassword=changeit, tlsTrustStore=" + trust
                + ", tlsTrustStorePassword=changeit";
    }

    private long unauthorized(CacheManager cm) {
        return cluster.jmx(cm).managerCount("unauthorized");
    }

    @Test
    void trustedNodes_replicateBothWays_largeValuesAndManySmallOnesInOrder() {
        CacheManager a = cluster.start("a", tls(keyA));
        CacheManager b = cluster.start("b", tls(keyB));
        byte[] big = new byte[1 << 20];
        new Random(1).nextBytes(big);
        a.getCache("sync").put(new Element("big", big));
        assertThat((byte[]) b.getCache("sync").get("big").getObjectValue()).as("1 MB, synchronously").isEqualTo(big);
        byte[] back = new byte[1 << 20];
        new Random(2).nextBytes(back);
        b.getCache("async").put(new Element("back", back));

        List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
        b.getCache("async").getCacheEventNotificationService().registerListener(new CacheEventListenerAdapter() {
            @Override
            public void notifyElementPut(Ehcache cache, Element element) {
                record(element);
            }

            @Override
            public void notifyElementUpdated(Ehcache cache, Element element) {
                record(element);
            }

            private void record(Element element) {
                if ("last".equals(element.getObjectKey())) {
                    seen.add((Integer) element.getObjectValue());
                }
            }
        });
        for (int i = 0; i < 2000; i++) {
            a.getCache("async").put(new Element("n" + i, i));
            a.getCache("async").put(new Element("last", i));
        }
        Await.until(() -> b.getCache("async").get("last") != null
                && (Integer) b.getCache("async").get("last").getObjectValue() == 1999,
                () -> "the last of 2,000 updates over TLS");
        for (int i = 0; i < 2000; i++) {
            assertThat(b.getCache("async").get("n" + i)).as("n" + i).isNotNull();
        }
        assertThat(seen).as("updates applied in the order they were made").isSorted().contains(1999);
        Await.until(() -> a.getCache("async").get("back") != null, () -> "1 MB the other way");
        assertThat((byte[]) a.getCache("async").get("back").getObjectValue()).isEqualTo(back);
        assertThat(unauthorized(a)).isZero();
        assertThat(unauthorized(b)).isZero();
    }

    @Test
    void aPlainNode_andANodeWithAnUntrustedCertificate_areRefusedAndCounted_andNothingOfTheirsIsApplied() {
        CacheManager a = cluster.start("a", tls(keyA));
        CacheManager plain = cluster.start("plain", "");
        for (int i = 0; i < 20; i++) {
            plain.getCache("async").put(new Element("p" + i, "v"));
        }
        Await.until(() -> unauthorized(a) >= 1, () -> "the plain node's refusal counted");
        // a does not send to it either: it does not speak TLS
        a.getCache("async").put(new Element("mine", "v"));
        Await.until(() -> cluster.jmx(a).managerCount("failed") > 0, () -> "a's sends to the plain node fail");
        assertThat(plain.getCache("async").get("mine")).isNull();
        cluster.stop(plain);

        long before = unauthorized(a);
        long failed = cluster.jmx(a).managerCount("failed");
        // the rogue trusts a; a does not trust the rogue
        CacheManager rogue = cluster.start("rogue", tls(keyRogue));
        for (int i = 0; i < 20; i++) {
            rogue.getCache("async").put(new Element("r" + i, "v"));
        }
        Await.until(() -> unauthorized(a) > before, () -> "the rogue's refusal counted");
        a.getCache("async").put(new Element("mine2", "v"));
        Await.until(() -> cluster.jmx(a).managerCount("failed") > failed, () -> "a's sends to the rogue fail");
        assertThat(rogue.getCache("async").get("mine2")).isNull();
        assertThat(a.getCache("async").getSize()).as("elements applied from refused nodes").isEqualTo(2);
        assertThat(CacheKeys.of(a.getCache("async"))).containsOnly("mine", "mine2");
    }

    @Test
    void theClusterSecret_isProvenInsideTls() {
        CacheManager a = cluster.start("a", tls(keyA) + ", clusterSecret=correct-horse-battery-staple");
        CacheManager b = cluster.start("b", tls(keyB) + ", clusterSecret=correct-horse-battery-staple");
        b.getCache("async").put(new Element("k", "v"));
        Await.until(() -> a.getCache("async").get("k") != null, () -> "TLS and the same secret");
        // a trusted certificate, another secret
        CacheManager other = cluster.start("other", tls(keyB) + ", clusterSecret=another-secret-of-16-chars");
        other.getCache("async").put(new Element("other", "v"));
        Await.until(() -> unauthorized(a) > 0, () -> "the other secret refused");
        assertThat(a.getCache("async").get("other")).isNull();
    }

    @Test
    void aClientWithoutCertificate_isRefused_whenClientAuthIsOn() throws Exception {
        CacheManager a = cluster.start("a", tls(keyA));
        try (SSLSocket s = connect(certless(), a)) {
            sendPut(s, "k");
            assertThat(closedByNode(s, 5000)).as("the node closes the connection").isTrue();
        } catch (IOException e) {
            // the node's alert arrived while the client was still writing: refused all the same
        }
        Await.until(() -> unauthorized(a) == 1, () -> "unauthorized=" + unauthorized(a));
        assertThat(a.getCache("async").get("k")).isNull();
    }

    @Test
    void withoutClientAuth_aClientWithoutCertificate_isUnauthenticated_soTheHostGateApplies() throws Exception {
        CacheManager open = cluster.start("open", tls(keyA) + ", tlsClientAuth=false");
        try (SSLSocket s = connect(certless(), open)) {
            sendPut(s, "k");
            Await.until(() -> open.getCache("async").get("k") != null, () -> "loopback is admitted");
        }
        assertThat(unauthorized(open)).isZero();
        cluster.stop(open);

        CacheManager gated = cluster.start("gated",
                tls(keyB) + ", tlsClientAuth=false, unauthenticatedPeers=192.0.2.1");
        assertThatThrownBy(() -> {
            try (SSLSocket s = connect(certless(), gated)) {
                s.startHandshake();
                sendPut(s, "k");
                assertThat(s.getInputStream().read()).isEqualTo(-1);
            }
        }).as("a host the gate does not admit is closed before the TLS handshake").isInstanceOf(IOException.class);
        Await.until(() -> unauthorized(gated) == 1, () -> "unauthorized=" + unauthorized(gated));
        assertThat(gated.getCache("async").get("k")).isNull();
    }

    @Test
    void plainTextJunk_andSilence_onATlsPort_areClosed_andTheNodeKeepsServingHonestPeers() throws Exception {
        int handshake = InboundConnection.handshakeMillis;
        InboundConnection.handshakeMillis = 1000;
        try {
            CacheManager a = cluster.start("a", tls(keyA));
            InetSocketAddress address = TcpWire.address(cluster.endpoint(a));
            try (Socket s = new Socket(address.getAddress(), address.getPort())) {
                s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                assertThat(TcpWire.closedByPeer(s, 5000)).isTrue();
            }
            byte[] put = EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("plain", "v")));
            try (Socket s = new Socket(address.getAddress(), address.getPort())) {
                OutputStream out = s.getOutputStream();
                out.write(TcpWire.frame(Frames.Type.HELLO, "plain:1".getBytes(StandardCharsets.UTF_8)));
                out.write(TcpWire.frame(Frames.Type.EVENTS, put));
                assertThat(TcpWire.closedByPeer(s, 5000)).isTrue();
            }
            Await.until(() -> unauthorized(a) == 2, () -> "unauthorized=" + unauthorized(a));
            long start = System.nanoTime();
            try (Socket s = new Socket(address.getAddress(), address.getPort())) {
                assertThat(TcpWire.closedByPeer(s, 10_000)).as("a silent connection is closed").isTrue();
            }
            assertThat((System.nanoTime() - start) / 1_000_000).as("ms until closed").isLessThan(5000);

            CacheManager b = cluster.start("b", tls(keyB));
            b.getCache("async").put(new Element("honest", "v"));
            Await.until(() -> a.getCache("async").get("honest") != null, () -> "the honest peer's event");
            assertThat(a.getCache("async").getSize()).isEqualTo(1);
        } finally {
            InboundConnection.handshakeMillis = handshake;
        }
    }

    @Test
    void aTlsPeerStallingInTheMiddleOfAFrame_isClosed_andItsBufferFreed() throws Exception {
        long stall = TcpTransport.stallMillis;
        TcpTransport.stallMillis = 1000;
        try {
            CacheManager a = cluster.start("a", tls(keyA));
            try (SSLSocket s = connect(context(keyB), a)) {
                OutputStream out = s.getOutputStream();
                out.write(TcpWire.frame(Frames.Type.HELLO, "staller:1".getBytes(StandardCharsets.UTF_8)));
                ByteBuffer h = ByteBuffer.allocate(Frames.HEADER_BYTES);
                Frames.writeHeader(h, Frames.Type.EVENTS, 0, 8 << 20);
                out.write(h.array());
                out.write(new byte[1 << 20]);
                out.flush();
                Await.until(() -> inboundBufferBytes(a) > 0, () -> "the frame's buffer grows");
                assertThat(closedByNode(s, 10_000)).as("the stalled connection is closed").isTrue();
            }
            Await.until(() -> inboundBufferBytes(a) == 0, () -> "inboundBufferBytes=" + inboundBufferBytes(a));
            CacheManager b = cluster.start("b", tls(keyB));
            b.getCache("async").put(new Element("after", "v"));
            Await.until(() -> a.getCache("async").get("after") != null, () -> "the node still replicates");
        } finally {
            TcpTransport.stallMillis = stall;
        }
    }

    private long inboundBufferBytes(CacheManager cm) {
        return cluster.jmx(cm).managerGauge("inboundBufferBytes").longValue();
    }

    @Test
    void badConfiguration_isRefused_withAClearMessage() {
        assertThatThrownBy(() -> cluster.start("keyWithoutTls",
                "tlsKeyStore=" + keyA + ", tlsKeyStorePassword=changeit"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("tlsKeyStore").hasMessageContaining("unless tls=true");
        assertThatThrownBy(() -> cluster.start("trustWithoutTls", "tlsTrustStore=" + trust))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("tlsTrustStore").hasMessageContaining("unless tls=true");
        assertThatThrownBy(() -> cluster.start("tlsWithoutKey", "tls=true"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("tlsKeyStore").hasMessageContaining("a key store");
        // client certificates checked against the JDK's public CAs would let anyone with such a certificate in
        assertThatThrownBy(() -> cluster.start("noTrustStore", "tls=true, tlsKeyStore=" + keyA
                + ", tlsKeyStorePassword=changeit"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("tlsTrustStore").hasMessageContaining("public CA");
        assertThatThrownBy(() -> cluster.start("wrongPassword", tls(keyA).replace("tlsKeyStorePassword=changeit",
                "tlsKeyStorePassword=wrong")))
                .hasStackTraceContaining("tcp-a.p12");
    }

    @Test
    void peerAuthentication_namesTheCertificates_andTheSecretWithThem() throws Exception {
        String certificates = "TLS client certificates (tlsClientAuth=true)";
        assertThat(peerAuthentication(true, true, false)).isEqualTo(certificates);
        assertThat(peerAuthentication(true, false, false)).as("unauthenticated: the host gate applies").isNull();
        assertThat(peerAuthentication(false, true, false)).isNull();
        assertThat(peerAuthentication(true, true, true)).startsWith(certificates + " and clusterSecret");
        assertThat(peerAuthentication(true, false, true)).startsWith("clusterSecret");
    }

    private static String peerAuthentication(boolean tls, boolean clientAuth, boolean secret) throws Exception {
        TcpTransport t = new TcpTransport(new TcpSettings(2000, 5000, 1 << 20, 64, 0, 1L << 30, tls,
                TlsConfig.none(), clientAuth));
        ReplicationMetrics metrics = new ReplicationMetrics("tls-auth-test", "tcp");
        t.start((TransportContext) Proxy.newProxyInstance(TcpTlsTest.class.getClassLoader(),
                new Class<?>[] {TransportContext.class}, (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "clusterSecret":
                            return secret ? ClusterSecret.of("correct-horse-battery-staple") : null;
                        case "metrics":
                            return metrics;
                        case "cacheManagerName":
                            return "tls-auth-test";
                        case "listener":
                            return null;
                        default:
                            throw new UnsupportedOperationException(method.getName());
                    }
                }));
        try {
            return t.peerAuthentication();
        } finally {
            t.stop();
        }
    }

    private static SSLContext context(Path key) throws Exception {
        return TlsStores.context(key.toString(), TestKeyStores.PASSWORD, trust.toString(), TestKeyStores.PASSWORD,
                "PKCS12");
    }

    /** A client that trusts the nodes and has no certificate of its own. */
    private static SSLContext certless() throws Exception {
        return TlsStores.context(null, "", trust.toString(), TestKeyStores.PASSWORD, "PKCS12");
    }

    private SSLSocket connect(SSLContext context, CacheManager node) throws IOException {
        InetSocketAddress address = TcpWire.address(cluster.endpoint(node));
        SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket();
        s.connect(address, 2000);
        s.setSoTimeout(5000);
        return s;
    }

    private static void sendPut(Socket s, String key) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(TcpWire.frame(Frames.Type.HELLO, "client:1".getBytes(StandardCharsets.UTF_8)));
        out.write(TcpWire.frame(Frames.Type.EVENTS,
                EventCodec.singletonBatch(EventCodec.encodePut("async", new Element(key, "v")))));
        out.flush();
    }

    /** Whether the node closed the connection (end of stream, a reset or its TLS alert) within the time. */
    private static boolean closedByNode(Socket s, int timeoutMillis) throws IOException {
        s.setSoTimeout(timeoutMillis);
        byte[] skipped = new byte[1024];
        try {
            while (s.getInputStream().read(skipped) != -1) {
                // not a close yet
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }
}
