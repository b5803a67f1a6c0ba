package io.ehrelay.tcp;

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
import io.ehrelay.config.OverflowPolicy;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.testing.LogCapture;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code ehcache.xml} files as users write them, on 127.0.0.1: what stock Ehcache accepts starts, and what it
 * does not is refused at start in a line that names the mistake.
 */
class TcpDropInTest {

    private static final String XML = "<ehcache name=\"%s\" updateCheck=\"false\" monitoring=\"off\">\n"
            + "  <cacheManagerPeerProviderFactory class=\"io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory\"\n"
            + "      properties=\"%s\"/>\n"
            + "  <cacheManagerPeerListenerFactory class=\"io.ehrelay.tcp.TcpCacheManagerPeerListenerFactory\"\n"
            + "      properties=\"%s\"/>\n"
            + "  <cache name=\"users\" maxEntriesLocalHeap=\"1000\">\n"
            + "    <cacheEventListenerFactory class=\"io.ehrelay.tcp.TcpCacheReplicatorFactory\"\n"
            + "        properties=\"%s\"/>\n"
            + "    <bootstrapCacheLoaderFactory class=\"io.ehrelay.tcp.TcpBootstrapCacheLoaderFactory\"\n"
            + "        properties=\"%s\"/>\n"
            + "  </cache>\n"
            + "</ehcache>\n";

    private static final String STOCK = "net.sf.ehcache.distribution.RMI";
    private static final String TCP = "io.ehrelay.tcp.Tcp";

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
        return ReplicationNode.find(cm, TcpSettings.SCHEME);
    }

    /** Ehcache's own distributed configurations leave properties empty for their defaults; stock reads them so. */
    @Test
    void emptyValues_meanTheirDefaults_withOneWarnEach() {
        String replicator = "replicateAsynchronously=, replicatePuts=, replicateUpdatesViaCopy=, syncTimeoutMillis=";
        String bootstrap = "bootstrapAsynchronously=, maximumChunkSizeBytes=";
        CacheManager a;
        try (LogCapture log = LogCapture.start()) {
            a = start(ContractCluster.uniqueName("tcp-empty"), "peerDiscovery=manual, peers=, queueMaxBytes=, "
                    + "overflowPolicy=, connectTimeoutMillis= ", "hostName=127.0.0.1, port=", replicator, bootstrap);
            String[][] expected = {
                {"queueMaxBytes", "TcpCacheManagerPeerProviderFactory", "64m"},
                {"overflowPolicy", "TcpCacheManagerPeerProviderFactory", "block"},
                {"connectTimeoutMillis", "TcpCacheManagerPeerProviderFactory", "2000"},
                {"port", "TcpCacheManagerPeerListenerFactory", "0"},
                {"replicateAsynchronously", "TcpCacheReplicatorFactory", "true"},
                {"replicatePuts", "TcpCacheReplicatorFactory", "true"},
                {"replicateUpdatesViaCopy", "TcpCacheReplicatorFactory", "true"},
                {"syncTimeoutMillis", "TcpCacheReplicatorFactory", "5000"},
                {"bootstrapAsynchronously", "TcpBootstrapCacheLoaderFactory", "true"},
                {"maximumChunkSizeBytes", "TcpBootstrapCacheLoaderFactory", "5000000"},
            };
            for (String[] e : expected) {
                assertThat(log.lines("ehrelay: property '" + e[0] + "' of " + e[1] + " is empty; using its default "
                        + e[2])).as(e[0]).hasSize(1);
            }
            assertThat(log.lines(" is empty; using its default ")).hasSize(expected.length);
        }
        assertThat(node(a).config().queueMaxBytes()).isEqualTo(64L << 20);
        assertThat(node(a).config().overflowPolicy()).isEqualTo(OverflowPolicy.BLOCK);
        assertThat(node(a).localEndpoint()).startsWith("127.0.0.1:").doesNotEndWith(":0");
        // and it replicates
        CacheManager b = start(ContractCluster.uniqueName("tcp-empty"), "peerDiscovery=manual, peers="
                + node(a).localEndpoint() + ", queueMaxBytes=", "hostName=127.0.0.1, port=", replicator, bootstrap);
        b.getCache("users").put(new Element("k", "v"));
        Await.until(() -> a.getCache("users").get("k") != null, () -> "a did not receive b's put");
        assertThat(a.getCache("users").get("k").getObjectValue()).isEqualTo("v");
    }

    /**
     * Ehcache splits the properties attribute on commas, so peers after a comma arrive as unknown properties named
     * like their host; peers after a space make one entry. Both are refused at start, naming the separator.
     */
    @Test
    void peersSeparatedByASpace_orAComma_areRefused_namingTheSeparator() throws Exception {
        String listener = "hostName=127.0.0.1, port=0";
        assertThatThrownBy(() -> start(ContractCluster.uniqueName("tcp-space"),
                "peerDiscovery=manual, peers=127.0.0.1:40002 127.0.0.1:40003", listener, "", ""))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay TcpCacheManagerPeerProviderFactory: peers: '127.0.0.1:40002 127.0.0.1:40003' "
                        + "holds a space; separate peers with '|' (peers=127.0.0.1:40002|127.0.0.1:40003)");
        assertThatThrownBy(() -> start(ContractCluster.uniqueName("tcp-comma"),
                "peerDiscovery=manual, peers=127.0.0.1:40002, 127.0.0.1:40003", listener, "", ""))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay TcpCacheManagerPeerProviderFactory: peers: '127.0.0.1:40003' follows a comma, "
                        + "and Ehcache splits the properties attribute on commas (it arrived as an unknown property "
                        + "'127.0.0.1'); separate peers with '|' (peers=127.0.0.1:40002|127.0.0.1:40003)");
        // three on one host: the host arrives twice, which is said as the separator too, not as a repeated key
        assertThatThrownBy(() -> start(ContractCluster.uniqueName("tcp-commas"),
                "peerDiscovery=manual, peers=localhost:40002, localhost:40003, localhost:40004", listener, "", ""))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("peers: 'localhost:40003' follows a comma")
                .hasMessageContaining("(peers=localhost:40002|localhost:40003|localhost:40004)");
        // a host name never holds a space
        assertThatThrownBy(() -> start(ContractCluster.uniqueName("tcp-host"),
                "peerDiscovery=manual, peers=my host:40002", listener, "", ""))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("'my host:40002' holds a space");
        // the separator that works
        String p1 = "127.0.0.1:" + unusedPort();
        String p2 = "127.0.0.1:" + unusedPort();
        CacheManager ok = start(ContractCluster.uniqueName("tcp-bar"), "peerDiscovery=manual, peers=" + p1 + "|" + p2,
                listener, "", "");
        assertThat(node(ok).config().discovery().manualPeers()).containsExactly(p1, p2);
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

    private static String cache(String name, String replicator, String bootstrap) {
        return "  <cache name=\"" + name + "\" maxEntriesLocalHeap=\"100\">\n"
                + factory("cacheEventListenerFactory", replicator, "replicateAsynchronously=true") + "\n"
                + (bootstrap == null ? "" : factory("bootstrapCacheLoaderFactory", bootstrap,
                "bootstrapAsynchronously=true") + "\n") + "  </cache>";
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
     * A cache left with stock RMI's replicator (and bootstrap loader) under ehrelay's provider would start and
     * never replicate (stock finds no provider of its scheme: a NullPointerException on every flush). One ERROR per
     * factory line names the cache, the class found and the class to put there; a cache configured right is not
     * named.
     */
    @Test
    void aStockReplicatorUnderEhrelaysProvider_isNamedAtStart_withTheClassToUse() {
        String name = ContractCluster.uniqueName("tcp-mixed");
        try (LogCapture log = LogCapture.start()) {
            CacheManager cm = startXml(name,
                    factory("cacheManagerPeerProviderFactory", TCP + "CacheManagerPeerProviderFactory",
                            "peerDiscovery=manual"),
                    factory("cacheManagerPeerListenerFactory", TCP + "CacheManagerPeerListenerFactory",
                            "hostName=127.0.0.1, port=0"),
                    cache("users", STOCK + "CacheReplicatorFactory", STOCK + "BootstrapCacheLoaderFactory"),
                    cache("orders", TCP + "CacheReplicatorFactory", TCP + "BootstrapCacheLoaderFactory"));
            assertThat(cm.getCache("users")).as("the application starts, as with stock Ehcache").isNotNull();
            assertThat(mixErrors(log)).filteredOn(l -> l.contains("'" + name + "'")).containsExactly(
                    "ehrelay: cache 'users' uses "
                            + "net.sf.ehcache.distribution.RMICacheReplicatorFactory but CacheManager '" + name
                            + "' replicates with io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory: its puts are not "
                            + "replicated; use io.ehrelay.tcp.TcpCacheReplicatorFactory",
                    "ehrelay: cache 'users' uses "
                            + "net.sf.ehcache.distribution.RMIBootstrapCacheLoaderFactory but CacheManager '" + name
                            + "' replicates with io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory: it does not "
                            + "bootstrap from peers; use io.ehrelay.tcp.TcpBootstrapCacheLoaderFactory");
        }
    }

    /**
     * The reverse: ehrelay's replicator under a stock provider, or under none, never replicates either; it is named
     * at start (the replicator factory finds the CacheManager being constructed), not only at the first put.
     */
    @Test
    void anEhrelayReplicatorUnderAStockProvider_orNone_isNamedAtStart() throws Exception {
        String stock = ContractCluster.uniqueName("tcp-stock-provider");
        String none = ContractCluster.uniqueName("tcp-no-provider");
        try (LogCapture log = LogCapture.start()) {
            startXml(stock, factory("cacheManagerPeerProviderFactory", STOCK + "CacheManagerPeerProviderFactory",
                    "peerDiscovery=manual, rmiUrls=//127.0.0.1:" + unusedPort() + "/users"),
                    cache("users", TCP + "CacheReplicatorFactory", null));
            startXml(none, cache("users", TCP + "CacheReplicatorFactory", null),
                    cache("orders", TCP + "CacheReplicatorFactory", null));
            assertThat(mixErrors(log)).containsExactly(
                    "ehrelay: cache 'users' uses "
                            + "io.ehrelay.tcp.TcpCacheReplicatorFactory but CacheManager '" + stock + "' replicates "
                            + "with net.sf.ehcache.distribution.RMICacheManagerPeerProviderFactory: its puts are not "
                            + "replicated; use io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory as its "
                            + "cacheManagerPeerProviderFactory",
                    "ehrelay: caches 'orders', 'users' use "
                            + "io.ehrelay.tcp.TcpCacheReplicatorFactory but CacheManager '" + none + "' has no "
                            + "cacheManagerPeerProviderFactory: their puts are not replicated; add a "
                            + "cacheManagerPeerProviderFactory of class io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory");
        }
    }

    /**
     * A stock listener under ehrelay's provider leaves the node without a listener (peers cannot send to it);
     * stock RMI and ehrelay side by side, each cache with its own family's replicator, is no mistake.
     */
    @Test
    void aStockListener_isNamed_butStockAndEhrelaySideBySide_isNot() throws Exception {
        String listener = ContractCluster.uniqueName("tcp-stock-listener");
        String both = ContractCluster.uniqueName("tcp-side-by-side");
        try (LogCapture log = LogCapture.start()) {
            startXml(listener, factory("cacheManagerPeerProviderFactory", TCP + "CacheManagerPeerProviderFactory",
                    "peerDiscovery=manual"),
                    factory("cacheManagerPeerListenerFactory", STOCK + "CacheManagerPeerListenerFactory",
                            "hostName=127.0.0.1, port=" + unusedPort()),
                    cache("users", TCP + "CacheReplicatorFactory", null));
            startXml(both, factory("cacheManagerPeerProviderFactory", STOCK + "CacheManagerPeerProviderFactory",
                    "peerDiscovery=manual, rmiUrls=//127.0.0.1:" + unusedPort() + "/legacy"),
                    factory("cacheManagerPeerProviderFactory", TCP + "CacheManagerPeerProviderFactory",
                            "peerDiscovery=manual"),
                    factory("cacheManagerPeerListenerFactory", TCP + "CacheManagerPeerListenerFactory",
                            "hostName=127.0.0.1, port=0"),
                    cache("legacy", STOCK + "CacheReplicatorFactory", null),
                    cache("users", TCP + "CacheReplicatorFactory", TCP + "BootstrapCacheLoaderFactory"));
            assertThat(mixErrors(log)).containsExactly(
                    "ehrelay: CacheManager '" + listener
                            + "' has the cacheManagerPeerListenerFactory "
                            + "net.sf.ehcache.distribution.RMICacheManagerPeerListenerFactory but replicates with "
                            + "io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory: peers cannot replicate to it; use "
                            + "io.ehrelay.tcp.TcpCacheManagerPeerListenerFactory");
        }
    }
}
