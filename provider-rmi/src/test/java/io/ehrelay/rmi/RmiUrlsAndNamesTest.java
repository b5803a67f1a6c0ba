package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.List;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.testing.CacheKeys;
import net.sf.ehcache.Cache;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** rmiUrls parsing, cache names the stock URL parser cuts, and peer kind negotiation between ehrelay nodes. */
@Timeout(120)
class RmiUrlsAndNamesTest {

    @Test
    void rmiUrls_everySpellingNamesTheRegistryEndpoint() {
        assertThat(RmiUrls.endpoint("//10.0.0.1:40001/orders")).isEqualTo("10.0.0.1:40001");
        assertThat(RmiUrls.endpoint("rmi://host:40001/orders#eu")).isEqualTo("host:40001");
        assertThat(RmiUrls.endpoint("//host:40001/a/b?c#d")).isEqualTo("host:40001");
        assertThat(RmiUrls.endpoint("//host:40001")).isEqualTo("host:40001");
        assertThat(RmiUrls.endpoint("host:40001")).isEqualTo("host:40001");
        assertThat(RmiUrls.endpoint("//[::1]:40001/x")).isEqualTo("[::1]:40001");
        assertThat(RmiUrls.host("[::1]:40001")).isEqualTo("::1");
        assertThatThrownBy(() -> RmiUrls.endpoint("//host/orders")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RmiUrls.endpoint("//host:99999/x")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void malformedRmiUrls_failTheCacheManagerWithTheProperty() {
        String xml = "<ehcache updateCheck=\"false\" name=\"bad-urls\">"
                + "<cacheManagerPeerProviderFactory class=\"io.ehrelay.rmi.RmiCacheManagerPeerProviderFactory\""
                + " properties=\"peerDiscovery=manual, rmiUrls=//nohost/orders\"/>"
                + "<defaultCache maxEntriesLocalHeap=\"10\"/></ehcache>";
        assertThatThrownBy(() -> new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8))))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("rmiUrls").hasMessageContaining("//nohost/orders");
    }

    /**
     * Two nodes that list each other start at once: each looks the other up and says hello while the other does
     * the same. Neither waits for the other (a hello is handled off the caller's thread), both become reachable.
     */
    @Test
    void nodesListingEachOther_connectBothWays() throws Exception {
        for (int round = 0; round < 5; round++) {
            int pa = StockInteropTest.freePort();
            int pb = StockInteropTest.freePort();
            CacheManager a = node("mutual-a-" + round, pa, pb);
            CacheManager b = node("mutual-b-" + round, pb, pa);
            try {
                ReplicationNode na = ReplicationNode.find(a, RmiSettings.SCHEME);
                ReplicationNode nb = ReplicationNode.find(b, RmiSettings.SCHEME);
                Await.until(() -> reaches(na) && reaches(nb), () -> "both nodes reach each other");
                a.getCache("c").put(new Element("k", "v"));
                Await.until(() -> b.getCache("c").get("k") != null, () -> "replicated after a mutual start");
            } finally {
                a.shutdown();
                b.shutdown();
            }
        }
    }

    /**
     * Ehcache's documented way to add a peer at run time, and what its own RMI bootstrap loader does: ask the
     * CacheManager for the provider of scheme "RMI". ehrelay RMI replaces stock RMI, so it answers there.
     */
    @Test
    void theProviderAndListenerAnswerToRmi_andRegisterPeerTakesAStockRmiUrlAtRunTime() throws Exception {
        int pa = StockInteropTest.freePort();
        int pb = StockInteropTest.freePort();
        int unused = StockInteropTest.freePort();
        CacheManager a = node("scheme-a", pa, unused);
        CacheManager b = node("scheme-b", pb, unused);
        try {
            assertThat(a.getCacheManagerPeerProvider("RMI")).isNotNull();
            assertThat(a.getCacheManagerPeerProvider("RMI").getScheme()).isEqualTo("RMI");
            assertThat(a.getCachePeerListener("RMI")).isNotNull();
            a.getCacheManagerPeerProvider("RMI").registerPeer("//127.0.0.1:" + pb + "/c");
            ReplicationNode na = ReplicationNode.find(a, RmiSettings.SCHEME);
            Await.until(() -> na.peers().stream().anyMatch(p -> p.endpoint().equals("127.0.0.1:" + pb)),
                    () -> "registered peer listed: " + na.peers());
            a.getCache("c").put(new Element("k", "v"));
            Await.until(() -> b.getCache("c").get("k") != null, () -> "replicated to the peer registered at run time");
            a.getCacheManagerPeerProvider("RMI").unregisterPeer("//127.0.0.1:" + pb + "/c");
            Await.until(() -> na.peers().stream().noneMatch(p -> p.endpoint().equals("127.0.0.1:" + pb)),
                    () -> "unregistered peer still listed: " + na.peers());
        } finally {
            a.shutdown();
            b.shutdown();
        }
    }

    /**
     * Point 5 of the API contract, with stock Ehcache 2.10's RMI as the reference: once node b removes a cache,
     * node a no longer lists b for it (stock: the lookup of the unbound URL fails), and still does for the cache
     * b kept. Both run the same file, with only the class prefix changed.
     */
    @Test
    void aRemovedCache_leavesListRemoteCachePeers_asItDoesWithStockRmi() throws Exception {
        // stock's stubs name the host of this property (else this machine's address): loopback only
        if (System.getProperty("java.rmi.server.hostname") == null) {
            System.setProperty("java.rmi.server.hostname", "127.0.0.1");
        }
        for (String prefix : new String[] {"net.sf.ehcache.distribution.RMI", "io.ehrelay.rmi.Rmi"}) {
            int pa = StockInteropTest.freePort();
            int pb = StockInteropTest.freePort();
            CacheManager a = twoCacheNode(prefix, "removed-a", pa, pb);
            CacheManager b = twoCacheNode(prefix, "removed-b", pb, pa);
            try {
                Await.until(() -> remotePeers(a, "c").size() == 1 && remotePeers(a, "d").size() == 1,
                        () -> prefix + ": a lists b for c and d");
                b.removeCache("d");
                Await.until(() -> remotePeers(a, "d").isEmpty(), () -> prefix + ": b still listed for d");
                assertThat(remotePeers(a, "c")).as(prefix + ": b still listed for c").hasSize(1);
                a.getCache("c").put(new Element("k", "v"));
                Await.until(() -> b.getCache("c").get("k") != null, () -> prefix + ": c still replicates");
            } finally {
                a.shutdown();
                b.shutdown();
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static List<CachePeer> remotePeers(CacheManager cm, String cache) {
        return cm.getCacheManagerPeerProvider("RMI").listRemoteCachePeers(cm.getCache(cache));
    }

    private static CacheManager twoCacheNode(String prefix, String name, int port, int peerPort) {
        String cache = "<cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\""
                + " properties=\"replicateAsynchronously=true, asynchronousReplicationIntervalMillis=100\"/>";
        String xml = "<ehcache updateCheck=\"false\" name=\"" + name + "\">"
                + "<cacheManagerPeerProviderFactory class=\"" + prefix + "CacheManagerPeerProviderFactory\""
                + " properties=\"peerDiscovery=manual, rmiUrls=//127.0.0.1:" + peerPort + "/c|//127.0.0.1:"
                + peerPort + "/d\"/>"
                + "<cacheManagerPeerListenerFactory class=\"" + prefix + "CacheManagerPeerListenerFactory\""
                + " properties=\"hostName=127.0.0.1, port=" + port + ", socketTimeoutMillis=5000\"/>"
                + "<cache name=\"c\" maxEntriesLocalHeap=\"100\">" + cache + "</cache>"
                + "<cache name=\"d\" maxEntriesLocalHeap=\"100\">" + cache + "</cache></ehcache>";
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    private static boolean reaches(ReplicationNode n) {
        return !n.peers().isEmpty() && n.transport().isReachable(n.peers().get(0));
    }

    private static CacheManager node(String name, int port, int peerPort) {
        String xml = "<ehcache updateCheck=\"false\" name=\"" + name + "\">"
                + "<cacheManagerPeerProviderFactory class=\"io.ehrelay.rmi.RmiCacheManagerPeerProviderFactory\""
                + " properties=\"peerDiscovery=manual, rmiUrls=//127.0.0.1:" + peerPort + "/c\"/>"
                + "<cacheManagerPeerListenerFactory class=\"io.ehrelay.rmi.RmiCacheManagerPeerListenerFactory\""
                + " properties=\"hostName=127.0.0.1, port=" + port + "\"/>"
                + "<cache name=\"c\" maxEntriesLocalHeap=\"100\"><cacheEventListenerFactory"
                + " class=\"io.ehrelay.rmi.RmiCacheReplicatorFactory\"/></cache></ehcache>";
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void cacheNamesWithHashAndSlash_replicateAndAreBoundVerbatim() throws Exception {
        try (ContractCluster cluster = new ContractCluster(RmiContractTest.FIXTURE)) {
            CacheManager a = cluster.start("names-a");
            CacheManager b = cluster.start("names-b");
            for (String name : new String[] {"orders#eu", "a/b?c"}) {
                a.addCache(name);
                b.addCache(name);
            }
            Cache ordersA = a.getCache("orders#eu");
            ordersA.put(new Element("k", "v"));
            a.getCache("a/b?c").put(new Element("k", "w"));
            Await.until(() -> b.getCache("orders#eu").get("k") != null && b.getCache("a/b?c").get("k") != null,
                    () -> "names with # and / replicate");
            assertThat(b.getCache("orders#eu").get("k").getObjectValue()).isEqualTo("v");
            // a stock peer would look the cache up under its exact name
            String endpoint = cluster.endpoint(b);
            Registry registry = LocateRegistry.getRegistry(RmiUrls.host(endpoint), RmiUrls.port(endpoint));
            CachePeer peer = (CachePeer) registry.lookup("orders#eu");
            assertThat(peer.getName()).isEqualTo("orders#eu");
            assertThat(peer.getUrl()).isEqualTo("//" + endpoint + "/orders#eu");
            assertThat(CacheKeys.of(peer)).containsExactly("k");
            RmiTransport t = (RmiTransport) ReplicationNode.find(a, RmiSettings.SCHEME).transport();
            assertThat(t.peerKinds()).containsEntry(endpoint, RmiPeerChannel.Kind.EHRELAY);
        }
    }
}
