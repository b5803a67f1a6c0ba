package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.Jmx;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A peer that was down: counted failures while it is away, and a reconnect as soon as it shows up. */
@Timeout(60)
class TcpReconnectTest {

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static CacheManager node(String name, int port, int peerPort) {
        String xml = "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + name + "\">"
                + "<cacheManagerPeerProviderFactory class=\"io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory\""
                + " properties=\"peers=127.0.0.1:" + peerPort + ", retryMaxMillis=60000\"/>"
                + "<cacheManagerPeerListenerFactory class=\"io.ehrelay.tcp.TcpCacheManagerPeerListenerFactory\""
                + " properties=\"hostName=127.0.0.1, port=" + port + "\"/>"
                + "<cache name=\"c\" maxEntriesLocalHeap=\"1000\" eternal=\"true\"><cacheEventListenerFactory"
                + " class=\"io.ehrelay.tcp.TcpCacheReplicatorFactory\"/></cache></ehcache>";
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void peerDown_sendsAreCountedFailed_andItsReturnEndsTheBackoffAtOnce() throws Exception {
        int portA = freePort();
        int portB = freePort();
        CacheManager a = node("reconnect-a", portA, portB);
        CacheManager b = null;
        try {
            a.getEhcache("c").put(new Element("lost", "while b is down"));
            Jmx ja = new Jmx(a.getName(), "tcp");
            Await.until(() -> ja.cacheCount("c", "failed") == 1, () -> "failed=" + ja.cacheCount("c", "failed"));
            // a retries with a doubling backoff (0.1, 0.2, … s): after its 6th failed connect it waits 3.2 s, longer
            // than the reconnect this test allows, before its next attempt
            Await.until(Duration.ofSeconds(20), () -> ja.managerCount("connectFailures") >= 6,
                    () -> "connectFailures=" + ja.managerCount("connectFailures"));
            long started = System.nanoTime();
            b = node("reconnect-b", portB, portA);
            // b connects to a at start; a takes that as proof b is up instead of waiting out its backoff
            Await.until(Duration.ofSeconds(20), () -> ja.managerGauge("peersReachable").intValue() == 1,
                    () -> "a does not reach b");
            long millis = (System.nanoTime() - started) / 1_000_000;
            assertThat(millis).as("reconnect after b came back, ms").isLessThan(2_500);
            a.getEhcache("c").put(new Element("k", "v"));
            CacheManager bb = b;
            Await.until(() -> bb.getEhcache("c").get("k") != null, () -> "not replicated after reconnect");
        } finally {
            a.shutdown();
            if (b != null) {
                b.shutdown();
            }
        }
    }
}
