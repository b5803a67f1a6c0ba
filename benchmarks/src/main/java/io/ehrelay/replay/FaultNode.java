package io.ehrelay.replay;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.Metered;
import com.codahale.metrics.MetricRegistry;
import com.sun.management.OperatingSystemMXBean;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.provider.Ehrelay;
import io.ehrelay.spi.Peer;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CacheManagerPeerProvider;

/**
 * A node of the fault scenarios, as its own JVM: {@code key=value} arguments {@code transport}, {@code index},
 * {@code ports} (every node's port), optionally {@code reach} (the port to reach each node at, e.g. a proxy in
 * front of it), {@code hosts} (every node's address, when each runs in a network namespace of its own; else all
 * on 127.0.0.1), {@code settings} (provider properties, {@code ;}-separated). It builds its
 * CacheManager (bootstrapping cache {@code replay} synchronously from a peer, if one is up), says
 * {@code READY}, then answers commands on stdin:
 * <ul>
 * <li>{@code AWAIT_PEERS n}: waits until {@code n} peers are reachable → {@code PEERS n}</li>
 * <li>{@code WRITE millis}: says {@code WRITING}, then puts, updates and removes on 2,000 keys (values of 256 B)
 * for that long → {@code WROTE operations maxPutMicros}</li>
 * <li>{@code STATS} → {@code STATS sent failed dropped queueHighWaterEvents queueCapacityEvents gaps resyncs
 * maxUsedHeapMB liveThreads duplicateBatches queueHighWaterBytes applied enqueued keysRepaired}</li>
 * <li>{@code DIGEST} → {@code DIGEST size hash} of the cache's keys and values</li>
 * <li>{@code ENDPOINT} → {@code ENDPOINT} and the node's own endpoint</li>
 * <li>{@code PUT key} → {@code PUT key}, once this node put it; {@code HAS key} → {@code HAS true|false}</li>
 * <li>{@code HEAP} → {@code HEAP usedMBAfterGc liveThreads}</li>
 * <li>{@code EXIT}</li>
 * </ul>
 */
public final class FaultNode {

    private static final int KEYS = 2_000;
    private static long maxUsedHeap;
    /** Values differ by node: after a split, whose writes survived shows in the content. */
    private static int salt;

    private FaultNode() {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = ReplayNode.keyValues(argv);
        String transport = a.get("transport");
        int index = Integer.parseInt(a.get("index"));
        int[] ports = ReplayNode.ports(a.get("ports"));
        int[] reach = a.containsKey("reach") ? ReplayNode.ports(a.get("reach")) : ports;
        String settings = a.getOrDefault("settings", "").replace(';', ',');
        salt = index * 31;
        CacheManager cm;
        try {
            String xml = Profiles.faultXml(transport, "fault" + index + "-" + ProcessHandle.current().pid(), index,
                    ports, reach, settings, a.containsKey("hosts") ? a.get("hosts").split(",") : null);
            cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        } catch (Exception | Error e) {
            ReplayNode.say("ERROR " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        Ehcache cache = cm.getEhcache("replay");
        ReplicationNode node = ReplicationNode.all(cm).get(0);
        String metricsName = node.metrics().transport();
        MetricRegistry metrics = Ehrelay.metricRegistry(cm);
        ReplayNode.say("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] cmd = line.trim().split(" ");
            switch (cmd[0]) {
                case "AWAIT_PEERS": {
                    int want = Integer.parseInt(cmd[1]);
                    int reachable = awaitReachablePeers(node, want);
                    ReplayNode.say(reachable >= want ? "PEERS " + reachable : "ERROR only " + reachable + " peers");
                    break;
                }
                case "WRITE":
                    write(cache, Long.parseLong(cmd[1]));
                    break;
                case "STATS":
                    sampleHeap();
                    ReplayNode.say("STATS " + count(metrics, cache(cm, metricsName, "sent")) + " "
                            + count(metrics, cache(cm, metricsName, "failed")) + " "
                            + count(metrics, cache(cm, metricsName, "dropped")) + " "
                            + gauge(metrics, manager(cm, metricsName, "queueHighWaterEvents")) + " "
                            + gauge(metrics, manager(cm, metricsName, "queueCapacityEvents")) + " "
                            + count(metrics, manager(cm, metricsName, "gaps")) + " "
                            + count(metrics, manager(cm, metricsName, "resyncs")) + " " + (maxUsedHeap >> 20) + " "
                            + ManagementFactory.getThreadMXBean().getThreadCount() + " "
                            + count(metrics, manager(cm, metricsName, "duplicateBatches")) + " "
                            + gauge(metrics, manager(cm, metricsName, "queueHighWaterBytes")) + " "
                            + count(metrics, cache(cm, metricsName, "applied")) + " "
                            + count(metrics, cache(cm, metricsName, "enqueued")) + " "
                            + count(metrics, cache(cm, metricsName, "keysRepaired")));
                    break;
                case "HEAP": {
                    System.gc();
                    Runtime rt = Runtime.getRuntime();
                    ReplayNode.say("HEAP " + ((rt.totalMemory() - rt.freeMemory()) >> 20) + " "
                            + ManagementFactory.getThreadMXBean().getThreadCount());
                    break;
                }
                case "LISTED": {
                    // what an application's health check sees: the peers Ehcache's provider lists for the cache
                    int listed = 0;
                    for (CacheManagerPeerProvider p
                            : cm.getCacheManagerPeerProviders().values()) {
                        listed += p.listRemoteCachePeers(cache).size();
                    }
                    ReplayNode.say("LISTED " + listed);
                    break;
                }
                case "ENDPOINT":
                    ReplayNode.say("ENDPOINT " + node.transport().localEndpoint());
                    break;
                case "SECURITY": {
                    // after a GC (and the cleaners of the direct buffers it found unreachable), so that heap and
                    // direct memory show what the node holds, not what it made
                    System.gc();
                    Thread.sleep(300);
                    System.gc();
                    Runtime rt = Runtime.getRuntime();
                    long direct = 0;
                    for (BufferPoolMXBean b
                            : ManagementFactory.getPlatformMXBeans(
                            BufferPoolMXBean.class)) {
                        if ("direct".equals(b.getName())) {
                            direct = b.getMemoryUsed();
                        }
                    }
                    long cpu = ((OperatingSystemMXBean) ManagementFactory
                            .getOperatingSystemMXBean()).getProcessCpuTime();
                    ReplayNode.say("SECURITY " + count(metrics, manager(cm, metricsName, "unauthorized")) + " "
                            + count(metrics, manager(cm, metricsName, "rejected")) + " "
                            + count(metrics, manager(cm, metricsName, "refusedConnections")) + " "
                            + ManagementFactory.getThreadMXBean().getThreadCount() + " "
                            + ((rt.totalMemory() - rt.freeMemory()) >> 20) + " " + (direct >> 20) + " "
                            + TimeUnit.NANOSECONDS.toMillis(cpu) + " " + cache.getSize() + " "
                            + count(metrics, manager(cm, metricsName, "malformedFrames")));
                    break;
                }
                case "PUT":
                    cache.put(new Element(cmd[1], "v-" + cmd[1]));
                    ReplayNode.say("PUT " + cmd[1]);
                    break;
                case "HAS":
                    ReplayNode.say("HAS " + (cache.get(cmd[1]) != null));
                    break;
                case "DIGEST":
                    ReplayNode.say("DIGEST " + cache.getSize() + " " + digest(cache));
                    break;
                case "EXIT":
                    cm.shutdown();
                    System.exit(0);
                    return;
                default:
                    ReplayNode.say("ERROR unknown command " + line);
            }
        }
        cm.shutdown();
        System.exit(0);
    }

    private static String cache(CacheManager cm, String transport, String metric) {
        return ObjectNames.cacheMetric(cm.getName(), transport, "replay", metric);
    }

    private static String manager(CacheManager cm, String transport, String metric) {
        return ObjectNames.cacheManagerMetric(cm.getName(), transport, metric);
    }

    private static long count(MetricRegistry r, String name) {
        Metered m = r.getMeters().get(name);
        return m == null ? 0 : m.getCount();
    }

    private static long gauge(MetricRegistry r, String name) {
        @SuppressWarnings("rawtypes")
        Gauge g = r.getGauges().get(name);
        return g == null ? -1 : ((Number) g.getValue()).longValue();
    }

    private static void sampleHeap() {
        Runtime rt = Runtime.getRuntime();
        maxUsedHeap = Math.max(maxUsedHeap, rt.totalMemory() - rt.freeMemory());
    }

    /** A steady mixed load: about 50 operations per millisecond at most, never more than the queue takes. */
    private static void write(Ehcache cache, long millis) {
        ReplayNode.say("WRITING");
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        long ops = 0;
        long maxPut = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 50; i++, ops++) {
                int key = (int) (ops % KEYS);
                long t0 = System.nanoTime();
                if (ops % 10 == 9) {
                    cache.remove((int) ((ops * 7) % KEYS));
                } else {
                    byte[] value = new byte[256];
                    Arrays.fill(value, (byte) (ops + salt));
                    cache.put(new Element(key, value));
                }
                maxPut = Math.max(maxPut, System.nanoTime() - t0);
            }
            if (ops % 5_000 == 0) {
                sampleHeap();
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        sampleHeap();
        ReplayNode.say("WROTE " + ops + " " + TimeUnit.NANOSECONDS.toMicros(maxPut));
    }

    /** Order-independent hash of the cache's keys and values. */
    private static long digest(Ehcache cache) {
        List<?> held = cache.getKeys(); // Ehcache 2: a raw List
        List<Object> keys = new ArrayList<>(held);
        long h = 0;
        for (Object k : keys) {
            Element e = cache.getQuiet(k);
            if (e == null) {
                continue;
            }
            Object v = e.getObjectValue();
            int vh = v instanceof byte[] ? Arrays.hashCode((byte[]) v) : String.valueOf(v).hashCode();
            h += (k.hashCode() * 1_000_003L) ^ vh;
        }
        return h;
    }

    /**
     * Waits (at most 60 s) until the node's transport reaches {@code want} peers; returns how many it reaches
     * then (fewer on time-out).
     */
    public static int awaitReachablePeers(ReplicationNode node, int want) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int reachable = 0;
        while (System.nanoTime() < deadline) {
            reachable = 0;
            for (Peer p : node.peers()) {
                if (node.transport().isReachable(p)) {
                    reachable++;
                }
            }
            if (reachable >= want) {
                break;
            }
            Thread.sleep(20);
        }
        return reachable;
    }
}
