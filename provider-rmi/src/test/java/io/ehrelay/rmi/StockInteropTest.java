package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.Jmx;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Peer;
import net.sf.ehcache.Cache;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A mixed cluster: an ehrelay RMI node in this JVM and a stock Ehcache 2.10 RMI node ({@code net.sf.ehcache.
 * distribution.RMI*} factories, unchanged) in a child JVM, on 127.0.0.1. Put, update, remove and removeAll
 * replicate both ways, asynchronously and synchronously, and each side bootstraps from the other.
 */
@Timeout(180)
class StockInteropTest {

    private StockProcess stock;
    private CacheManager ours;

    @AfterEach
    void tearDown() {
        if (ours != null) {
            ours.shutdown();
        }
        if (stock != null) {
            stock.close();
        }
    }

    @Test
    void mixedCluster_replicatesEveryOperationBothWays_andBootstrapsBothWays() throws Exception {
        int ourPort = freePort();
        int stockPort = freePort();
        ours = ehrelayNode("interop-ours", ourPort, stockPort);
        Cache async = ours.getCache("async");
        for (int i = 0; i < 200; i++) {
            async.put(new Element("boot-" + i, "value-" + i));
        }

        // stock bootstraps from ehrelay (its RMIBootstrapCacheLoader: getKeys + getElements on our CachePeer)
        stock = StockProcess.start(stockXml(stockPort, ourPort));
        assertThat(stock.call("size async")).isEqualTo("OK 200");
        assertThat(stock.call("get async boot-7")).isEqualTo("OK value-7");

        // ehrelay -> stock, asynchronous; our link may still be backing off from the failures before the stock
        // node started (an event sent then fails, counted; a stock node cannot resync)
        Await.until(() -> transport().isReachable(new Peer("127.0.0.1:" + stockPort)),
                () -> "channel to the stock node not up");
        async.put(new Element("a", "1"));
        awaitStock("get async a", "OK 1");
        async.put(new Element("a", "2"));
        awaitStock("get async a", "OK 2");
        async.remove("a");
        awaitStock("get async a", "OK <null>");
        // ehrelay -> stock, synchronous: on the stock node when put returns
        Cache sync = ours.getCache("sync");
        sync.put(new Element("s", "1"));
        assertThat(stock.call("get sync s")).isEqualTo("OK 1");
        sync.remove("s");
        assertThat(stock.call("get sync s")).isEqualTo("OK <null>");
        assertThat(transport().peerKinds()).containsEntry("127.0.0.1:" + stockPort, RmiPeerChannel.Kind.STOCK);
        // anti-entropy compares ehrelay nodes only: a check leaves the stock node out, and nothing failed
        ObjectName convergence = ObjectNames.of(ObjectNames.convergence("interop-ours", RmiSettings.NAME));
        assertThat(ManagementFactory.getPlatformMBeanServer().invoke(convergence, "checkNow", new Object[0],
                new String[0])).isEqualTo("no peers");
        assertThat(Jmx.attribute(ObjectNames.of(ObjectNames.cacheManagerMetric("interop-ours", RmiSettings.NAME,
                MetricNames.ANTI_ENTROPY_FAILURES)), "Count")).isEqualTo(0L);

        // stock -> ehrelay, asynchronous (stock's RmiEventMessage batches through our CachePeer.send)
        stock.call("put async b 1");
        Await.until(() -> value(async, "b") != null && value(async, "b").equals("1"), () -> "stock put reaches ehrelay");
        stock.call("put async b 2");
        Await.until(() -> "2".equals(value(async, "b")), () -> "stock update reaches ehrelay");
        stock.call("remove async b");
        Await.until(() -> value(async, "b") == null, () -> "stock remove reaches ehrelay");
        // stock -> ehrelay, synchronous (stock calls CachePeer.put/remove directly)
        stock.call("put sync t 9");
        assertThat(value(sync, "t")).isEqualTo("9");
        stock.call("remove sync t");
        assertThat(value(sync, "t")).isNull();

        // removeAll both ways
        async.removeAll();
        awaitStock("size async", "OK 0");
        stock.call("put async c 1");
        Await.until(() -> "1".equals(value(async, "c")), () -> "stock put after removeAll");
        stock.call("removeAll async");
        Await.until(() -> async.getSize() == 0, () -> "stock removeAll reaches ehrelay");
        // counted once the apply is done, so a moment after the cache shows it
        CacheMetrics asyncMetrics = ReplicationNode.find(ours, RmiSettings.SCHEME).metrics().cache("async");
        Await.until(() -> asyncMetrics.receivedCount() >= 5,
                () -> "events from the stock node counted as received: " + asyncMetrics.receivedCount());

        // ehrelay bootstraps from stock: restart our node while the stock node holds 150 elements
        for (int i = 0; i < 150; i++) {
            stock.call("put async st-" + i + " sv-" + i);
        }
        ours.shutdown();
        ours = ehrelayNode("interop-ours-2", ourPort, stockPort);
        Cache reborn = ours.getCache("async");
        assertThat(reborn.getSize()).as("bootstrapped from the stock node").isEqualTo(150);
        assertThat(value(reborn, "st-42")).isEqualTo("sv-42");
        // and the stock node replicates to the restarted node again
        stock.call("put async after-restart yes");
        Await.until(() -> "yes".equals(value(reborn, "after-restart")), () -> "stock reaches the restarted node");
    }

    /**
     * Automatic discovery across the two implementations: both speak Ehcache's multicast heartbeat (gzipped RMI
     * URLs), here on the loopback interface with TTL 0. Each finds the other and replicates to it.
     */
    @Test
    void mixedCluster_automaticDiscovery_findsEachOtherAndReplicates() throws Exception {
        int ourPort = freePort();
        int stockPort = freePort();
        String multicast = "peerDiscovery=automatic, multicastGroupAddress=230.0.0.91, multicastGroupPort="
                + (46000 + ThreadLocalRandom.current().nextInt(1000))
                + ", timeToLive=0, hostName=127.0.0.1";
        stock = StockProcess.start(xml("auto-stock", "net.sf.ehcache.distribution.RMI", stockPort, multicast));
        ours = new CacheManager(new ByteArrayInputStream(xml("auto-ours", "io.ehrelay.rmi.Rmi", ourPort,
                multicast + ", heartbeatIntervalMillis=500").getBytes(StandardCharsets.UTF_8)));
        ReplicationNode node = ReplicationNode.find(ours, RmiSettings.SCHEME);
        Await.until(() -> node.peers().size() == 1, () -> "ehrelay heard the stock node: " + node.peers());
        assertThat(node.peers().get(0).endpoint()).isEqualTo("127.0.0.1:" + stockPort);
        assertThat(node.config().discovery().peerTimeoutMillis()).as("stock's stale time for its 5 s heartbeats")
                .isEqualTo(10_100);

        Cache async = ours.getCache("async");
        // the stock node registers us once it heard our heartbeat; until then its puts go nowhere
        Await.until(() -> {
            stock.call("put async probe x");
            return "x".equals(value(async, "probe"));
        }, () -> "the stock node replicates to ehrelay after hearing its heartbeat");
        async.put(new Element("from-ehrelay", "1"));
        awaitStock("get async from-ehrelay", "OK 1");
        assertThat(transport().peerKinds()).containsEntry("127.0.0.1:" + stockPort, RmiPeerChannel.Kind.STOCK);
    }

    private static String xml(String name, String prefix, int port, String providerProperties) {
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + name + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"" + prefix + "CacheManagerPeerProviderFactory\"\n"
                + "      properties=\"" + providerProperties + "\"/>\n"
                + "  <cacheManagerPeerListenerFactory class=\"" + prefix + "CacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=127.0.0.1, port=" + port + ", socketTimeoutMillis=10000\"/>\n"
                + "  <cache name=\"async\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\"\n"
                + "        properties=\"replicateAsynchronously=true, asynchronousReplicationIntervalMillis=100\"/>\n"
                + "  </cache>\n"
                + "</ehcache>\n";
    }

    private void awaitStock(String command, String expected) {
        Await.until(() -> expected.equals(stock.call(command)), () -> command + " -> " + expected);
    }

    private RmiTransport transport() {
        return (RmiTransport) ReplicationNode.find(ours, RmiSettings.SCHEME).transport();
    }

    private static Object value(Cache cache, String key) {
        Element e = cache.get(key);
        return e == null ? null : e.getObjectValue();
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Our node: the user's stock file with the package and class prefixes replaced, nothing else. */
    static CacheManager ehrelayNode(String name, int port, int stockPort) {
        String xml = stockStyleXml(name, "io.ehrelay.rmi.Rmi", port, stockPort, "socketTimeoutMillis=10000");
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    private static String stockXml(int port, int ehrelayPort) {
        return stockStyleXml("interop-stock", "net.sf.ehcache.distribution.RMI", port, ehrelayPort,
                "socketTimeoutMillis=10000");
    }

    private static String stockStyleXml(String name, String prefix, int port, int peerPort, String listenerExtra) {
        String urls = "//127.0.0.1:" + peerPort + "/async|//127.0.0.1:" + peerPort + "/sync";
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + name + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"" + prefix + "CacheManagerPeerProviderFactory\"\n"
                + "      properties=\"peerDiscovery=manual, rmiUrls=" + urls + "\"/>\n"
                + "  <cacheManagerPeerListenerFactory class=\"" + prefix + "CacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=127.0.0.1, port=" + port + ", " + listenerExtra + "\"/>\n"
                + cache("async", prefix, true)
                + cache("sync", prefix, false)
                + "</ehcache>\n";
    }

    private static String cache(String name, String prefix, boolean async) {
        return "  <cache name=\"" + name + "\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\"\n"
                + "        properties=\"replicateAsynchronously=" + async
                + ", asynchronousReplicationIntervalMillis=100\"/>\n"
                + "    <bootstrapCacheLoaderFactory class=\"" + prefix + "BootstrapCacheLoaderFactory\"\n"
                + "        properties=\"bootstrapAsynchronously=false\"/>\n"
                + "  </cache>\n";
    }

    /** The stock node's JVM and its command channel. */
    static final class StockProcess implements AutoCloseable {
        private final Process process;
        private final Writer stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        private StockProcess(Process process) {
            this.process = process;
            this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread pump = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String l = r.readLine(); l != null; l = r.readLine()) {
                        lines.add(l);
                    }
                } catch (IOException e) {
                    lines.add("ERR " + e);
                }
                lines.add("EOF");
            }, "stock-node-pump");
            pump.setDaemon(true);
            pump.start();
        }

        static StockProcess start(String xml) throws Exception {
            Path dir = Files.createDirectories(Path.of("target", "stock-node"));
            Path config = Files.createTempFile(dir, "ehcache-", ".xml");
            Files.writeString(config, xml);
            List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx256m", "-Djava.rmi.server.hostname=127.0.0.1",
                    "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                    "-cp", System.getProperty("java.class.path"), StockNode.class.getName(), config.toString());
            Process p = new ProcessBuilder(cmd)
                    .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("stderr.log").toFile())).start();
            StockProcess sp = new StockProcess(p);
            String first = sp.next(60);
            if (!"READY".equals(first)) {
                sp.close();
                throw new AssertionError("stock node did not start: " + first + " (see target/stock-node/stderr.log)");
            }
            return sp;
        }

        private String next(int seconds) throws InterruptedException {
            String l = lines.poll(seconds, TimeUnit.SECONDS);
            return l == null ? "TIMEOUT" : l;
        }

        String call(String command) {
            try {
                stdin.write(command + "\n");
                stdin.flush();
                return next(30);
            } catch (IOException e) {
                return "ERR " + e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "ERR interrupted";
            }
        }

        @Override
        public void close() {
            try {
                stdin.write("exit\n");
                stdin.flush();
            } catch (IOException e) {
                // gone already
            }
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
