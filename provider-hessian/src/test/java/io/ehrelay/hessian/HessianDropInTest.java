package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
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
import net.sf.ehcache.CacheException;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;

/**
 * {@code ehcache.xml} files as users write them: a peer list with the wrong separator is refused at start; a peer
 * with another secret, a wrong path and a listener port already taken are each named for what they are.
 */
class HessianDropInTest {

    private static final String XML = "<ehcache name=\"%s\" updateCheck=\"false\" monitoring=\"off\">\n"
            + "  <cacheManagerPeerProviderFactory class=\"io.ehrelay.hessian.HessianCacheManagerPeerProviderFactory\"\n"
            + "      properties=\"%s\"/>\n"
            + "  <cacheManagerPeerListenerFactory class=\"io.ehrelay.hessian.HessianCacheManagerPeerListenerFactory\"\n"
            + "      properties=\"hostName=127.0.0.1, port=0\"/>\n"
            + "  <cache name=\"users\" maxEntriesLocalHeap=\"1000\">\n"
            + "    <cacheEventListenerFactory class=\"io.ehrelay.hessian.HessianCacheReplicatorFactory\"/>\n"
            + "  </cache>\n"
            + "</ehcache>\n";

    private static final String LISTENER_XML = "<ehcache name=\"%s\" updateCheck=\"false\" monitoring=\"off\">\n"
            + "  <cacheManagerPeerProviderFactory class=\"io.ehrelay.hessian.HessianCacheManagerPeerProviderFactory\"\n"
            + "      properties=\"%s\"/>\n"
            + "  <cacheManagerPeerListenerFactory class=\"io.ehrelay.hessian.HessianCacheManagerPeerListenerFactory\"\n"
            + "      properties=\"hostName=127.0.0.1, port=%d\"/>\n"
            + "  <cache name=\"users\" maxEntriesLocalHeap=\"1000\">\n"
            + "    <cacheEventListenerFactory class=\"io.ehrelay.hessian.HessianCacheReplicatorFactory\"/>\n"
            + "  </cache>\n"
            + "</ehcache>\n";

    private static void start(String provider) {
        String xml = String.format(XML, ContractCluster.uniqueName("hessian-peers"), provider);
        new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8))).shutdown();
    }

    /**
     * After a comma, a URL arrives as an unknown property named "http" (the rest its value); after a space, one
     * entry holds two URLs. Both are refused, naming the separator.
     */
    @Test
    void peersSeparatedByASpace_orAComma_areRefused_namingTheSeparator() {
        assertThatThrownBy(() -> start("peerDiscovery=manual, "
                + "peers=http://127.0.0.1:40002/ehrelay http://127.0.0.1:40003/ehrelay"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay HessianCacheManagerPeerProviderFactory: peers: 'http://127.0.0.1:40002/ehrelay "
                        + "http://127.0.0.1:40003/ehrelay' holds a space; separate peers with '|' "
                        + "(peers=http://127.0.0.1:40002/ehrelay|http://127.0.0.1:40003/ehrelay)");
        assertThatThrownBy(() -> start("peerDiscovery=manual, "
                + "peers=http://127.0.0.1:40002/ehrelay, http://127.0.0.1:40003/ehrelay"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay HessianCacheManagerPeerProviderFactory: peers: 'http://127.0.0.1:40003/ehrelay' "
                        + "follows a comma, and Ehcache splits the properties attribute on commas (it arrived as an "
                        + "unknown property 'http'); separate peers with '|' "
                        + "(peers=http://127.0.0.1:40002/ehrelay|http://127.0.0.1:40003/ehrelay)");
    }

    private static CacheManager node(String provider, int port) {
        String xml = String.format(LISTENER_XML, ContractCluster.uniqueName("hessian-node"), provider, port);
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * A caller with another clusterSecret (it refuses the listener's proof), one without any (the listener refuses
     * its session-less call) and one calling a path where no ehrelay listener is (404): each line names its cause,
     * where all three said only "unreachable" before.
     */
    @Test
    void anotherSecret_noSecret_andAWrongPath_areNamedForWhatTheyAre() {
        CacheManager a = node("peerDiscovery=manual, clusterSecret=the-first-secret-here", 0);
        List<CacheManager> callers = new ArrayList<>();
        try (LogCapture log = LogCapture.start()) {
            String url = ReplicationNode.find(a, HessianSettings.SCHEME).localEndpoint();
            String wrongPath = url.substring(0, url.lastIndexOf('/')) + "/replication";
            String[][] cases = {
                {"clusterSecret=the-other-secret-here, peers=" + url, url},
                {"unauthenticatedPeers=loopback, peers=" + url, url},
                {"clusterSecret=the-first-secret-here, peers=" + wrongPath, wrongPath},
            };
            String[] lines = new String[cases.length];
            for (int i = 0; i < cases.length; i++) {
                CacheManager caller = node("peerDiscovery=manual, " + cases[i][0], 0);
                callers.add(caller);
                caller.getCache("users").put(new Element("k", "v"));
                String failure = "could not deliver 1 events to peer " + cases[i][1] + " of CacheManager "
                        + caller.getName() + ": ";
                Await.until(() -> !log.lines(failure).isEmpty(), () -> "no send failure logged: " + failure);
                String line = log.lines(failure).get(0);
                lines[i] = line.substring(line.indexOf(failure) + failure.length());
            }
            assertThat(lines[0]).contains("a wrong proof of the cluster secret (clusterSecret missing or different)");
            assertThat(lines[1]).contains("session refused: clusterSecret missing or different");
            assertThat(lines[2]).contains("answered 404: no ehrelay listener at that path")
                    .doesNotContain("clusterSecret");
        } finally {
            for (CacheManager cm : callers) {
                cm.shutdown();
            }
            a.shutdown();
        }
    }

    /** A listener port another process holds: the refusal names the address. */
    @Test
    void aListenerPortAlreadyTaken_isNamedWithItsAddress() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1,
                InetAddress.getByName("127.0.0.1"))) {
            int port = taken.getLocalPort();
            assertThatThrownBy(() -> node("peerDiscovery=manual", port))
                    .isInstanceOf(CacheException.class)
                    .hasMessageContaining("cannot listen on 127.0.0.1:" + port + ": ");
        }
    }
}
