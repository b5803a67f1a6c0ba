package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.Jmx;
import io.ehrelay.testing.LogCapture;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.event.CacheEventListener;
import net.sf.ehcache.event.CacheEventListenerAdapter;
import net.sf.ehcache.event.CacheEventListenerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two nodes starting together: one bootstraps a cache from the other, whose CacheManager is still adding its
 * configured caches (its replication is up, the cache not yet). The bootstrap asks again quietly until the cache is
 * there, instead of warning that the peer "has no live cache" and counting a failure.
 */
@Timeout(120)
class TcpBootstrapWhileStartingTest {

    /** Holds node A's construction inside its cache {@code c} until the test lets it go on. */
    public static final class Hold extends CacheEventListenerFactory {
        static final CountDownLatch ENTERED = new CountDownLatch(1);
        static final CountDownLatch RELEASE = new CountDownLatch(1);

        @Override
        public CacheEventListener createCacheEventListener(Properties properties) {
            ENTERED.countDown();
            try {
                RELEASE.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new CacheEventListenerAdapter();
        }
    }

    /** Says when node B's cache {@code c} is being made (its bootstrap follows). */
    public static final class Mark extends CacheEventListenerFactory {
        static final CountDownLatch MADE = new CountDownLatch(1);

        @Override
        public CacheEventListener createCacheEventListener(Properties properties) {
            MADE.countDown();
            return new CacheEventListenerAdapter();
        }
    }

    private static String xml(String name, int port, int peerPort, String extraFactory, boolean bootstrap) {
        return "<ehcache name=\"" + name + "\" updateCheck=\"false\" monitoring=\"off\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory\"\n"
                + "      properties=\"peerDiscovery=manual, peers=127.0.0.1:" + peerPort + "\"/>\n"
                + "  <cacheManagerPeerListenerFactory class=\"io.ehrelay.tcp.TcpCacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=127.0.0.1, port=" + port + "\"/>\n"
                + "  <cache name=\"c\" maxEntriesLocalHeap=\"1000\">\n"
                + "    <cacheEventListenerFactory class=\"" + extraFactory + "\"/>\n"
                + "    <cacheEventListenerFactory class=\"io.ehrelay.tcp.TcpCacheReplicatorFactory\"/>\n"
                + (bootstrap ? "    <bootstrapCacheLoaderFactory class=\"io.ehrelay.tcp.TcpBootstrapCacheLoaderFactory\"\n"
                + "        properties=\"bootstrapAsynchronously=false\"/>\n" : "")
                + "  </cache>\n</ehcache>\n";
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static Thread construct(String xml, AtomicReference<CacheManager> into) {
        Thread t = new Thread(() -> into.set(new CacheManager(
                new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)))));
        t.start();
        return t;
    }

    @Test
    void aBootstrapFromAPeerStillAddingTheCache_waitsForIt_withoutAFailure() throws Exception {
        int portA = freePort();
        int portB = freePort();
        AtomicReference<CacheManager> a = new AtomicReference<>();
        AtomicReference<CacheManager> b = new AtomicReference<>();
        try (LogCapture log = LogCapture.start()) {
            Thread ta = construct(xml("start-a", portA, portB, Hold.class.getName(), false), a);
            assertThat(Hold.ENTERED.await(30, TimeUnit.SECONDS)).as("A is adding its cache").isTrue();
            Thread tb = construct(xml("start-b", portB, portA, Mark.class.getName(), true), b);
            assertThat(Mark.MADE.await(30, TimeUnit.SECONDS)).as("B is making its cache").isTrue();
            tb.join(1000);
            assertThat(tb.isAlive()).as("B's synchronous bootstrap waits for A's cache").isTrue();
            Hold.RELEASE.countDown();
            ta.join(30_000);
            tb.join(30_000);
            assertThat(a.get()).isNotNull();
            assertThat(b.get()).as("B constructed").isNotNull();
            Jmx jmx = new Jmx("start-b", TcpContractTest.FIXTURE.transportName());
            assertThat(jmx.cacheCount("c", "bootstrapFailures")).as("bootstrap failures").isZero();
            assertThat(log.lines("could not bootstrap cache c")).isEmpty();
            assertThat(log.lines("has no live cache named")).isEmpty();
            Ehcache bc = b.get().getEhcache("c");
            a.get().getCache("c").put(new Element("after", "start"));
            Await.until(() -> bc.get("after") != null, () -> "A and B replicate");
        } finally {
            Hold.RELEASE.countDown();
            for (AtomicReference<CacheManager> cm : List.of(b, a)) {
                if (cm.get() != null) {
                    cm.get().shutdown();
                }
            }
        }
    }
}
