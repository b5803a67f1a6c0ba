package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.testing.LogCapture;
import io.ehrelay.testing.TestProperties;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import net.sf.ehcache.config.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Stock RMI {@code ehcache.xml} files with the class names swapped, on 127.0.0.1: what stock Ehcache accepts
 * starts, and what it does not is refused at start in a line that names the mistake.
 */
class RmiDropInTest {

    private static final String XML = "<ehcache name=\"%s\" updateCheck=\"false\" monitoring=\"off\">\n"
            + "  <cacheManagerPeerProviderFactory class=\"io.ehrelay.rmi.RmiCacheManagerPeerProviderFactory\"\n"
            + "      properties=\"%s\"/>\n"
            + "  <cacheManagerPeerListenerFactory class=\"io.ehrelay.rmi.RmiCacheManagerPeerListenerFactory\"\n"
            + "      properties=\"%s\"/>\n"
            + "  <cache name=\"users\" maxEntriesLocalHeap=\"1000\">\n"
            + "    <cacheEventListenerFactory class=\"io.ehrelay.rmi.RmiCacheReplicatorFactory\"\n"
            + "        properties=\"%s\"/>\n"
            + "    <bootstrapCacheLoaderFactory class=\"io.ehrelay.rmi.RmiBootstrapCacheLoaderFactory\"\n"
            + "        properties=\"%s\"/>\n"
            + "  </cache>\n"
            + "</ehcache>\n";

    private final List<CacheManager> managers = new ArrayList<>();

    @AfterEach
    void shutdown() {
        for (CacheManager cm : managers) {
            cm.shutdown();
        }
    }

    private CacheManager start(String name, String provider, String listener, String replicator, String bootstrap) {
        String xml = String.format(XML, name, provider, listener, replicator, bootstrap);
        CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        managers.add(cm);
        return cm;
    }

    /** A loopback port nothing listens on (for peers a node may try to reach). */
    private static int unusedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static ReplicationNode node(CacheManager cm) {
        return ReplicationNode.find(cm, RmiSettings.SCHEME);
    }

    /**
     * The listener line of Ehcache's own distributed configurations, {@code hostName=, port=,
     * socketTimeoutMillis=}, with the host set to loopback: stock reads an empty value as "use the default".
     */
    @Test
    void emptyValues_meanTheirDefaults_withOneWarnEach() {
        String replicator = "replicateAsynchronously=, replicatePuts=, replicatePutsViaCopy=, replicateUpdates=, "
                + "replicateUpdatesViaCopy=, replicateRemovals=, asynchronousReplicationIntervalMillis=";
        String bootstrap = "bootstrapAsynchronously=, maximumChunkSizeBytes=";
        CacheManager a;
        try (LogCapture log = LogCapture.start()) {
            a = start(ContractCluster.uniqueName("rmi-empty"), "peerDiscovery=manual, rmiUrls=, queueMaxBytes=, "
                    + "callTimeoutMillis=", "hostName=127.0.0.1, port=, remoteObjectPort=, socketTimeoutMillis=",
                    replicator, bootstrap);
            String[][] expected = {
                {"queueMaxBytes", "RmiCacheManagerPeerProviderFactory", "64m"},
                {"callTimeoutMillis", "RmiCacheManagerPeerProviderFactory", "10000"},
                {"port", "RmiCacheManagerPeerListenerFactory", "0"},
                {"remoteObjectPort", "RmiCacheManagerPeerListenerFactory", "0"},
                {"socketTimeoutMillis", "RmiCacheManagerPeerListenerFactory", "120000"},
                {"replicateAsynchronously", "RmiCacheReplicatorFactory", "true"},
                {"replicatePuts", "RmiCacheReplicatorFactory", "true"},
                {"replicatePutsViaCopy", "RmiCacheReplicatorFactory", "true"},
                {"replicateUpdates", "RmiCacheReplicatorFactory", "true"},
                {"replicateUpdatesViaCopy", "RmiCacheReplicatorFactory", "true"},
                {"replicateRemovals", "RmiCacheReplicatorFactory", "true"},
                {"asynchronousReplicationIntervalMillis", "RmiCacheReplicatorFactory", "1000"},
                {"bootstrapAsynchronously", "RmiBootstrapCacheLoaderFactory", "true"},
                {"maximumChunkSizeBytes", "RmiBootstrapCacheLoaderFactory", "5000000"},
            };
            for (String[] e : expected) {
                assertThat(log.lines("ehrelay: property '" + e[0] + "' of " + e[1] + " is empty; using its default "
                        + e[2])).as(e[0]).hasSize(1);
            }
            assertThat(log.lines(" is empty; using its default ")).hasSize(expected.length);
        }
        RmiListenerSettings listener = node(a).listener().transportSettings(RmiListenerSettings.class);
        assertThat(listener.socketTimeoutMillis).isEqualTo(RmiListenerSettings.DEFAULT_SOCKET_TIMEOUT_MILLIS);
        assertThat(node(a).config().queueMaxBytes()).isEqualTo(64L << 20);
        // and it replicates, with a stock rmiUrls entry naming a
        CacheManager b = start(ContractCluster.uniqueName("rmi-empty"), "peerDiscovery=manual, rmiUrls=//"
                + node(a).localEndpoint() + "/users, queueMaxBytes=", "hostName=127.0.0.1, port=, socketTimeoutMillis=",
                replicator, bootstrap);
        b.getCache("users").put(new Element("k", "v"));
        Await.until(() -> a.getCache("users").get("k") != null, () -> "a did not receive b's put");
        assertThat(a.getCache("users").get("k").getObjectValue()).isEqualTo("v");
    }

    /**
     * With automatic discovery RMI forgets a silent peer after stock's own 10,100 ms; an empty
     * {@code peerTimeoutMillis} keeps that default (checked on the factory: nothing here multicasts).
     */
    @Test
    void anEmptyPeerTimeout_withAutomaticDiscovery_isStocksDefault() {
        CacheManager plain = new CacheManager(new Configuration().name(ContractCluster.uniqueName("rmi-timeout")));
        managers.add(plain);
        try (LogCapture log = LogCapture.start()) {
            new RmiCacheManagerPeerProviderFactory().createCachePeerProvider(plain, TestProperties.of(
                    "peerDiscovery", "automatic", "multicastGroupAddress", "230.0.0.1", "multicastGroupPort", "4446",
                    "timeToLive", "0", "hostName", "127.0.0.1", "peerTimeoutMillis", ""));
            assertThat(log.lines("ehrelay: property 'peerTimeoutMillis' of RmiCacheManagerPeerProviderFactory is "
                    + "empty; using its default 10100")).hasSize(1);
        }
        assertThat(node(plain).config().discovery().peerTimeoutMillis()).isEqualTo(10_100);
    }

    /**
     * Stock RMI separates rmiUrls with '|' too. After a comma, a URL arrives as an unknown property ("//host" with
     * the rest as its value); after a space, ehrelay's parser would have taken the first URL's host:port only.
     */
    @Test
    void rmiUrlsSeparatedByASpace_orAComma_areRefused_namingTheSeparator() throws Exception {
        String listener = "hostName=127.0.0.1, port=0";
        assertThatThrownBy(() -> start(ContractCluster.uniqueName("rmi-space"),
                "peerDiscovery=manual, rmiUrls=//127.0.0.1:40002/users //127.0.0.1:40003/users", listener, "", ""))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay RmiCacheManagerPeerProviderFactory: rmiUrls: '//127.0.0.1:40002/users "
                        + "//127.0.0.1:40003/users' holds a space; separate peers with '|' "
                        + "(rmiUrls=//127.0.0.1:40002/users|//127.0.0.1:40003/users)");
        assertThatThrownBy(() -> start(ContractCluster.uniqueName("rmi-comma"),
                "peerDiscovery=manual, rmiUrls=//127.0.0.1:40002/users, //127.0.0.1:40003/users", listener, "", ""))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay RmiCacheManagerPeerProviderFactory: rmiUrls: '//127.0.0.1:40003/users' follows "
                        + "a comma, and Ehcache splits the properties attribute on commas (it arrived as an unknown "
                        + "property '//127.0.0.1'); separate peers with '|' "
                        + "(rmiUrls=//127.0.0.1:40002/users|//127.0.0.1:40003/users)");
        // a cache name may hold a space: one peer, accepted as stock accepts it
        String u1 = "//127.0.0.1:" + unusedPort() + "/my users";
        String u2 = "//127.0.0.1:" + unusedPort() + "/users";
        CacheManager ok = start(ContractCluster.uniqueName("rmi-cache-name"),
                "peerDiscovery=manual, rmiUrls=" + u1 + "|" + u2, listener, "", "");
        assertThat(node(ok).config().discovery().manualPeers()).containsExactly(u1, u2);
    }

    /** An {@code ehcache.xml} of {@code parts} (factory lines and caches) under a CacheManager named {@code name}. */
    private CacheManager startXml(String name, String... parts) {
        String xml = "<ehcache name=\"" + name + "\" updateCheck=\"false\" monitoring=\"off\">\n"
                + String.join("\n", parts) + "\n</ehcache>\n";
        CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        managers.add(cm);
        return cm;
    }

    private static String factory(String element, String cls, String properties) {
        return "  <" + element + " class=\"" + cls + "\" properties=\"" + properties + "\"/>";
    }

    private static String cache(String name, String replicator) {
        return "  <cache name=\"" + name + "\" maxEntriesLocalHeap=\"100\">\n"
                + factory("cacheEventListenerFactory", replicator, "replicateAsynchronously=true") + "\n  </cache>";
    }

    /** The messages of the ERROR lines about mixed factories (slf4j-simple 1.6 puts the time first). */
    private static List<String> mixErrors(LogCapture log) {
        String logger = "ERROR io.ehrelay.internal.config.MixedFactories - ";
        List<String> out = new ArrayList<>();
        for (String line : log.lines(logger)) {
            out.add(line.substring(line.indexOf(logger) + logger.length()));
        }
        return out;
    }

    /**
     * Migrating from stock RMI, one class name forgotten: the stock replicator under ehrelay's RMI provider (both
     * of scheme "RMI") starts and replicates nothing. Named at start, with the class to put there.
     */
    @Test
    void aForgottenStockReplicator_isNamedAtStart_withTheClassToUse() throws Exception {
        String name = ContractCluster.uniqueName("node-a");
        try (LogCapture log = LogCapture.start()) {
            CacheManager cm = startXml(name, factory("cacheManagerPeerProviderFactory",
                    "io.ehrelay.rmi.RmiCacheManagerPeerProviderFactory",
                    "peerDiscovery=manual, rmiUrls=//127.0.0.1:" + unusedPort() + "/users"),
                    factory("cacheManagerPeerListenerFactory", "io.ehrelay.rmi.RmiCacheManagerPeerListenerFactory",
                            "hostName=127.0.0.1, port=0"),
                    cache("users", "net.sf.ehcache.distribution.RMICacheReplicatorFactory"),
                    cache("orders", "io.ehrelay.rmi.RmiCacheReplicatorFactory"));
            assertThat(cm.getCache("users")).isNotNull();
            assertThat(mixErrors(log)).containsExactly("ehrelay: cache 'users' uses "
                    + "net.sf.ehcache.distribution.RMICacheReplicatorFactory but CacheManager '" + name + "' replicates "
                    + "with io.ehrelay.rmi.RmiCacheManagerPeerProviderFactory: its puts are not replicated; use "
                    + "io.ehrelay.rmi.RmiCacheReplicatorFactory");
        }
    }

    /** The reverse: ehrelay's RMI replicator under stock RMI's provider (the same scheme) finds no ehrelay node. */
    @Test
    void anEhrelayReplicatorUnderTheStockProvider_isNamedAtStart() throws Exception {
        String name = ContractCluster.uniqueName("node-a");
        try (LogCapture log = LogCapture.start()) {
            startXml(name, factory("cacheManagerPeerProviderFactory",
                    "net.sf.ehcache.distribution.RMICacheManagerPeerProviderFactory",
                    "peerDiscovery=manual, rmiUrls=//127.0.0.1:" + unusedPort() + "/users"),
                    cache("users", "io.ehrelay.rmi.RmiCacheReplicatorFactory"));
            assertThat(mixErrors(log)).containsExactly("ehrelay: cache 'users' uses "
                    + "io.ehrelay.rmi.RmiCacheReplicatorFactory but CacheManager '" + name + "' replicates with "
                    + "net.sf.ehcache.distribution.RMICacheManagerPeerProviderFactory: its puts are not replicated; "
                    + "use io.ehrelay.rmi.RmiCacheManagerPeerProviderFactory as its cacheManagerPeerProviderFactory");
        }
    }

    /**
     * A listener hostName that is not this host's (192.0.2.1, TEST-NET: binding fails here, nothing is sent): the
     * refusal names the address and says it is not this host's, where RMI said "Port already in use"; and the
     * JVM-wide java.rmi.server.hostname the node set for its stubs is taken back.
     */
    @Test
    void aHostNameNotOfThisHost_isNamed_notAPortInUse() {
        String before = System.getProperty("java.rmi.server.hostname");
        try {
            assertThatThrownBy(() -> start(ContractCluster.uniqueName("rmi-foreign-host"), "peerDiscovery=manual",
                    "hostName=192.0.2.1, port=0", "", ""))
                    .isInstanceOf(CacheException.class)
                    .hasMessageContaining("cannot listen on 192.0.2.1:0: ")
                    .hasMessageContaining("192.0.2.1 is not an address of this host")
                    .hasMessageNotContaining("Port already in use");
            assertThat(System.getProperty("java.rmi.server.hostname")).isEqualTo(before);
        } finally {
            if (before == null) {
                System.clearProperty("java.rmi.server.hostname");
            } else {
                System.setProperty("java.rmi.server.hostname", before);
            }
        }
    }
}
