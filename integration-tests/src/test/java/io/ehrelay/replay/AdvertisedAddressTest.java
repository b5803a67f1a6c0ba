package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.ehrelay.contract.Await;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A node that peers reach elsewhere than where it listens (NAT, a container's published port): B listens on one
 * port and tells its peers another, {@code advertisedHostName:advertisedPort}, where a proxy on 127.0.0.1 forwards
 * to it. A knows B only by that address; both replicate to each other, and A's traffic to B went through the
 * proxy. Real CacheManagers, real sockets, loopback only.
 */
class AdvertisedAddressTest {

    private static final Map<String, String> SCHEMES = Map.of("tcp", "ehrelay-tcp", "rmi", "RMI", "hessian",
            "ehrelay-hessian");

    private static CacheManager node(String transport, String name, int port, String peer, String advertised) {
        String prefix = Profiles.factoryPrefix(transport);
        String xml = "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + name + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"" + prefix + "CacheManagerPeerProviderFactory\"\n"
                + "      properties=\"peerDiscovery=manual, " + Profiles.manualPeers(transport, peer, List.of("c"))
                + "\"/>\n"
                + "  <cacheManagerPeerListenerFactory class=\"" + prefix + "CacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=127.0.0.1, port=" + port + advertised + "\"/>\n"
                + "  <cache name=\"c\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\"/>\n"
                + "  </cache>\n"
                + "</ehcache>\n";
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rmi", "hessian"})
    void aNodeTellsItsPeersTheAdvertisedAddress_andIsReachedThere(String transport) throws Exception {
        int portA = ReplayNode.freePort();
        int portB = ReplayNode.freePort();
        try (CutProxy toB = new CutProxy(portB)) {
            String advertisedB = "127.0.0.1:" + toB.port();
            CacheManager b = node(transport, "adv-b-" + transport, portB, "127.0.0.1:" + portA,
                    ", advertisedHostName=127.0.0.1, advertisedPort=" + toB.port());
            CacheManager a = node(transport, "adv-a-" + transport, portA, advertisedB, "");
            try {
                Transport tb = ReplicationNode.find(b, SCHEMES.get(transport)).transport();
                assertThat(tb.localEndpoint()).as("what B tells its peers").contains(advertisedB)
                        .doesNotContain(":" + portB);
                // the start line's list of listeners: where B listens, not what it tells
                assertThat(tb.listeningOn()).as("where B listens").contains("127.0.0.1:" + portB)
                        .doesNotContain(":" + toB.port());
                a.getEhcache("c").put(new Element("from-a", "1"));
                Await.until(() -> b.getEhcache("c").get("from-a") != null, () -> "A's put did not reach B");
                b.getEhcache("c").put(new Element("from-b", "2"));
                Await.until(() -> a.getEhcache("c").get("from-b") != null, () -> "B's put did not reach A");
                assertThat(toB.bytesToTarget()).as("A reached B through the advertised address").isPositive();
            } finally {
                a.shutdown();
                b.shutdown();
            }
        }
    }
}
