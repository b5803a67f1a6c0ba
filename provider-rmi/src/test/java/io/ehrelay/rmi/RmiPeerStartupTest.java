package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.RMIServerSocketFactory;
import java.rmi.server.UnicastRemoteObject;

import io.ehrelay.contract.Await;
import io.ehrelay.spi.Peer;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Nodes started together: a peer whose RMI registry is already listening but holds nothing yet (an ehrelay node
 * between creating its registry and binding its relay) is not taken for a stock node. Taken for one, it would be
 * sent Ehcache's unstamped messages and never compared by anti-entropy for as long as both ran.
 */
@Timeout(120)
class RmiPeerStartupTest {

    private Registry empty;
    private CacheManager first;
    private CacheManager second;

    @AfterEach
    void tearDown() throws Exception {
        if (empty != null) {
            UnicastRemoteObject.unexportObject(empty, true);
        }
        for (CacheManager cm : new CacheManager[] {first, second}) {
            if (cm != null) {
                cm.shutdown();
            }
        }
    }

    @Test
    void aPeerWhoseRegistryHoldsNothingYet_isTriedAgain_notTakenForAStockNode() throws Exception {
        int firstPort = StockInteropTest.freePort();
        int secondPort = StockInteropTest.freePort();
        // the second node's registry is up, nothing bound in it yet
        RMIServerSocketFactory loopback = port -> new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        empty = LocateRegistry.createRegistry(secondPort, null, loopback);
        first = StockInteropTest.ehrelayNode("startup-first", firstPort, secondPort);
        Peer peer = new Peer("127.0.0.1:" + secondPort);
        String endpoint = "127.0.0.1:" + secondPort;
        RmiTransport transport = RmiConnectionBoundsTest.transport(first);

        assertThat(transport.isReachableWithin(peer, 10_000)).as("reachable through an empty registry")
                .isFalse();
        assertThat(transport.peerKinds().get(endpoint)).isNotEqualTo(RmiPeerChannel.Kind.STOCK);
        first.getCache("async").put(new Element("early", "1")); // fails while nobody serves: counted, resynced
        assertThat(transport.peerKinds().get(endpoint)).isNotEqualTo(RmiPeerChannel.Kind.STOCK);

        // the node now binds its relay: the first node reaches it as an ehrelay node and replicates to it
        UnicastRemoteObject.unexportObject(empty, true);
        empty = null;
        second = StockInteropTest.ehrelayNode("startup-second", secondPort, firstPort);
        Await.until(() -> transport.peerKinds().get(endpoint) == RmiPeerChannel.Kind.EHRELAY,
                () -> "the second node reached as " + transport.peerKinds().get(endpoint));
        first.getCache("async").put(new Element("later", "2"));
        Await.until(() -> second.getCache("async").get("later") != null, () -> "the put reaches the second node");
        assertThat(second.getCache("async").get("later").getObjectValue()).isEqualTo("2");
    }
}
