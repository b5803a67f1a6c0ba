package io.ehrelay.replay;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.OperatingSystemMXBean;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.codahale.metrics.MetricRegistry;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.provider.Ehrelay;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.event.CacheEventListenerAdapter;

/**
 * One node of a replay step, run as its own JVM by {@link Replay}. Arguments are {@code key=value}:
 * {@code role} (reader|writer), {@code transport}, {@code count}, {@code size}, {@code discovery}
 * (manual|multicast:port), {@code peer} (writer, manual), {@code mode} (async|sync|latency), and for latency
 * {@code payloads} and {@code calls}. It talks to the harness in lines on stdout:
 *
 * <pre>
 * reader: READY endpoint · PROGRESS n · DONE firstArrivalMicros lastArrivalMicros missing badValues peakHeap
 * writer: READY · WROTE firstPutMicros lastPutMicros peakHeap dropped failed putLoopCpuNanos · LAT payload p50us p99us maxus · BYE
 * </pre>
 *
 * A writer waits for {@code EXIT} on stdin before shutting down, so the reader is done before it stops.
 */
public final class ReplayNode {

    /** Seconds without a single arrival, after the first, that end a step as stalled (events were lost). */
    static final int STALL_SECONDS = 120;

    private static final BufferedReader STDIN = new BufferedReader(new InputStreamReader(System.in,
            StandardCharsets.UTF_8));

    private static long costCpuNanos;
    private static long costAllocBytes;

    private final Map<String, String> args;

    private ReplayNode(Map<String, String> args) {
        this.args = args;
    }

    /** A node process's {@code key=value} arguments. */
    static Map<String, String> keyValues(String[] argv) {
        Map<String, String> a = new HashMap<>();
        for (String s : argv) {
            int eq = s.indexOf('=');
            a.put(s.substring(0, eq), s.substring(eq + 1));
        }
        return a;
    }

    /**
     * Waits for {@code done}, saying {@code PROGRESS n} every second when {@code progress} is set; returns null when
     * done, or the reason it gave up: nothing arrived for {@link #STALL_SECONDS} after the first arrival (a
     * transport that lost events silently would otherwise hold the step until its time limit).
     */
    static String awaitArrivals(CountDownLatch done, AtomicInteger arrived, int expected, boolean progress)
            throws InterruptedException {
        int seen = -1;
        long changed = System.nanoTime();
        while (!done.await(1, TimeUnit.SECONDS)) {
            int n = arrived.get();
            if (progress) {
                say("PROGRESS " + n);
            }
            if (n != seen) {
                seen = n;
                changed = System.nanoTime();
            } else if (n > 0 && System.nanoTime() - changed > TimeUnit.SECONDS.toNanos(STALL_SECONDS)) {
                return "stalled: received " + n + " of " + expected + ", nothing more for " + STALL_SECONDS + " s";
            }
        }
        return null;
    }

    /** A comma-separated list of ports. */
    static int[] ports(String csv) {
        return Arrays.stream(csv.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = keyValues(argv);
        ReplayNode node = new ReplayNode(a);
        try {
            if (Profiles.STOCK_RMI.equals(a.get("transport"))) {
                LoopbackRmiSockets.install();
            }
            if ("reader".equals(a.get("role"))) {
                node.reader();
            } else {
                node.writer();
            }
        } catch (Throwable t) {
            System.out.println("ERROR " + t.toString().replace('\n', ' '));
            t.printStackTrace();
            System.exit(2);
        }
        System.exit(0);
    }

    private String arg(String name) {
        String v = args.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing argument " + name);
        }
        return v;
    }

    private int intArg(String name) {
        return Integer.parseInt(arg(name));
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Writes each live thread's CPU time and the GC time to stderr (the replay's node log): where the time went. */
    static void logCpu(String role) {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        StringBuilder sb = new StringBuilder(role + " " + ProcessHandle.current().pid() + " cpu ms:");
        for (long id : mx.getAllThreadIds()) {
            ThreadInfo info = mx.getThreadInfo(id);
            long cpu = mx.getThreadCpuTime(id);
            if (info != null && cpu > 50_000_000L) {
                sb.append(' ').append(info.getThreadName()).append('=').append(cpu / 1_000_000);
            }
        }
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sb.append(" | ").append(gc.getName()).append(": ").append(gc.getCollectionCount()).append(" in ")
                    .append(gc.getCollectionTime()).append(" ms");
        }
        System.err.println(sb);
    }

    /** Peak heap usage of this JVM (all heap pools), bytes. */
    public static long peakHeap() {
        long sum = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP && pool.getPeakUsage() != null) {
                sum += pool.getPeakUsage().getUsed();
            }
        }
        return sum;
    }

    /**
     * A free port on 127.0.0.1 (a stock RMI reader's listener, E4's members; the tests' nodes and servers), chosen
     * below the kernel's range of ephemeral ports: a port from that range can be taken by any outgoing connection
     * between its choice and the bind of the process it was chosen for (an 8-member E4 step failed so, "Address
     * already in use"). Falls back to an ephemeral port when no port below the range is free.
     */
    public static int freePort() throws IOException {
        int high = ephemeralLow() - 1;
        int low = 10_000;
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; high - low >= 1000 && i < 200; i++) {
            int port = low + random.nextInt(high - low + 1);
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // another port
            }
        }
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** The lowest ephemeral port (Linux: ip_local_port_range; elsewhere the IANA range's 49152). */
    private static int ephemeralLow() {
        try {
            String range = new String(Files.readAllBytes(Paths.get("/proc/sys/net/ipv4/ip_local_port_range")),
                    StandardCharsets.US_ASCII).trim();
            return Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 49152;
        }
    }

    private CacheManager cacheManager(boolean writer, String peer) {
        String xml = Profiles.ehcacheXml(arg("transport"), arg("role") + "-" + ProcessHandle.current().pid(),
                arg("discovery"), peer, writer, "sync".equals(args.getOrDefault("mode", "async"))
                        || "latency".equals(args.get("mode")));
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    // ---- reader ----------------------------------------------------------------------------------------------

    private void reader() throws Exception {
        int count = intArg("count");
        int size = intArg("size");
        Values values = new Values(size);
        if (!Profiles.isCacheTransport(arg("transport"))) {
            RawStream.read(count, values);
            return;
        }
        boolean stock = Profiles.STOCK_RMI.equals(arg("transport"));
        // stock RMI listens on a port it is given; a JGroups pair finds itself through the reader's port
        boolean byPort = stock || Profiles.isJGroups(arg("transport")) || Profiles.isStockJGroups(arg("transport"));
        String stockEndpoint = byPort ? "127.0.0.1:" + freePort() : null;
        CacheManager cm = cacheManager(false, stockEndpoint);
        Ehcache cache = cm.getEhcache("replay");
        AtomicInteger arrived = new AtomicInteger();
        AtomicLong first = new AtomicLong();
        AtomicLong last = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        cache.getCacheEventNotificationService().registerListener(new CacheEventListenerAdapter() {
            @Override
            public void notifyElementPut(Ehcache c, Element e) {
                long now = Clock.micros();
                int n = arrived.incrementAndGet();
                if (n == 1) {
                    first.set(now);
                }
                if (n >= count) {
                    last.set(now);
                    done.countDown();
                }
            }

            @Override
            public void notifyElementUpdated(Ehcache c, Element e) {
                notifyElementPut(c, e);
            }
        });
        Ehcache warm = cm.getEhcache("warmup");
        CountDownLatch warmedUp = new CountDownLatch(1);
        int warmCount = Profiles.warmupCount(size);
        AtomicInteger warmArrived = new AtomicInteger();
        warm.getCacheEventNotificationService().registerListener(new CacheEventListenerAdapter() {
            @Override
            public void notifyElementPut(Ehcache c, Element e) {
                if (warmArrived.incrementAndGet() == warmCount) {
                    warmedUp.countDown();
                }
            }
        });
        String endpoint = byPort ? stockEndpoint : ReplicationNode.all(cm).get(0).localEndpoint();
        say("READY " + endpoint);
        if ("hold".equals(args.get("mode"))) {
            waitForExit();
            cm.shutdown();
            return;
        }
        warmedUp.await();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (warm.getSize() > 0 && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        System.gc();
        markCost();
        say("WARM");
        String stalled = awaitArrivals(done, arrived, count, true);
        if (stalled != null) {
            say("ERROR " + stalled);
            waitForExit();
            cm.shutdown();
            return;
        }
        int missing = 0;
        int bad = 0;
        int stride = Math.max(1, count / 1000);
        for (int k = 0; k < count; k++) {
            Element e = cache.getQuiet(k);
            if (e == null) {
                missing++;
            } else if (k % stride == 0 && !values.matches(k, (byte[]) e.getObjectValue())) {
                bad++;
            }
        }
        logCpu("reader " + arg("transport") + " " + count + "x" + size);
        say("DONE " + first.get() + " " + last.get() + " " + missing + " " + bad + " " + peakHeap());
        waitForExit();
        cm.shutdown();
    }

    // ---- writer ----------------------------------------------------------------------------------------------

    private void writer() throws Exception {
        String mode = args.getOrDefault("mode", "async");
        if (!Profiles.isCacheTransport(arg("transport"))) {
            RawStream.write(parse(arg("peer")), intArg("count"), new Values(intArg("size")));
            return;
        }
        CacheManager cm = cacheManager(true, args.get("peer"));
        Ehcache cache = cm.getEhcache("replay");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (cm.getCacheManagerPeerProvider(Profiles.scheme(arg("transport"))).listRemoteCachePeers(cache).isEmpty()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no peer discovered within 30 s");
            }
            Thread.sleep(20);
        }
        if (Profiles.isStockJGroups(arg("transport"))) {
            awaitStockJGroupsView(cm, 2); // its one "peer" is the channel, listed before anyone joined
        }
        say("READY");
        if ("latency".equals(mode)) {
            latency(cache);
        } else {
            int count = intArg("count");
            Values values = new Values(intArg("size"));
            Ehcache warm = cm.getEhcache("warmup");
            for (int k = 0, n = Profiles.warmupCount(values.size()); k < n; k++) {
                warm.put(new Element(k, values.make(k)));
            }
            warm.removeAll();
            System.gc();
            waitFor("GO");
            markCost();
            long firstCpu = threadCpuNanos();
            long first = Clock.micros();
            for (int k = 0; k < count; k++) {
                cache.put(new Element(k, values.make(k)));
            }
            long last = Clock.micros();
            long loopCpu = threadCpuNanos() - firstCpu;
            // stock transports have no such counts: what they lose shows as missing at the reader
            MetricRegistry metrics = Ehrelay.metricRegistry(cm);
            long dropped = metrics == null ? 0
                    : metrics.meter(ObjectNames.cacheMetric(cm.getName(), arg("transport"), "replay", "dropped")).getCount();
            long failed = metrics == null ? 0
                    : metrics.meter(ObjectNames.cacheMetric(cm.getName(), arg("transport"), "replay", "failed")).getCount();
            Thread.sleep(500);
            logCpu("writer " + arg("transport") + " " + count + "x" + arg("size") + " put loop " + (last - first) / 1000 + " ms");
            say("WROTE " + first + " " + last + " " + peakHeap() + " " + dropped + " " + failed + " "
                    + (firstCpu < 0 ? -1 : loopCpu));
        }
        waitForExit();
        cm.shutdown();
        say("BYE");
    }

    private void latency(Ehcache cache) {
        int calls = intArg("calls");
        String[] payloads = arg("payloads").split(",");
        // warm both JVMs up (JIT) on every payload before measuring any
        for (int round = 0; round < 5; round++) {
            for (String p : payloads) {
                byte[] value = new byte[Integer.parseInt(p)];
                for (int i = 0; i < 400; i++) {
                    cache.put(new Element(-1 - i, value));
                }
            }
        }
        for (String p : payloads) {
            int payload = Integer.parseInt(p);
            byte[] value = new byte[payload];
            long[] nanos = new long[calls];
            for (int i = 0; i < calls; i++) {
                long t0 = System.nanoTime();
                cache.put(new Element(i, value));
                nanos[i] = System.nanoTime() - t0;
            }
            Arrays.sort(nanos);
            say("LAT " + payload + " " + nanos[calls / 2] / 1000.0 + " " + nanos[(int) Math.min(calls - 1,
                    Math.ceil(calls * 0.99) - 1)] / 1000.0 + " " + nanos[calls - 1] / 1000.0);
        }
    }

    /** Waits until the old JGroups module's channel sees {@code members} members (its channel field, by reflection). */
    static void awaitStockJGroupsView(CacheManager cm, int members) throws Exception {
        Object provider = cm.getCacheManagerPeerProvider("JGroups");
        Field f = provider.getClass().getDeclaredField("channel");
        f.setAccessible(true);
        Object channel = f.get(provider);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            Object view = channel.getClass().getMethod("getView").invoke(channel);
            int size = view == null ? 0 : (Integer) view.getClass().getMethod("size").invoke(view);
            if (size >= members) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the old JGroups module's view has " + size + " member(s) after 60 s");
            }
            Thread.sleep(20);
        }
    }

    private static InetSocketAddress parse(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        return new InetSocketAddress(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1)));
    }

    static void waitForExit() throws IOException {
        waitFor("EXIT");
    }

    /** Waits for a line from the harness; end of input counts as EXIT. {@code COST} is answered meanwhile. */
    static void waitFor(String word) throws IOException {
        String line;
        while ((line = STDIN.readLine()) != null) {
            if ("COST".equals(line.trim())) {
                say("COST " + cost());
                continue;
            }
            if (word.equals(line.trim()) || "EXIT".equals(line.trim())) {
                return;
            }
        }
    }

    /** Starts the window {@code COST} reports on: the timed step begins. */
    static void markCost() {
        costCpuNanos = processCpuNanos();
        costAllocBytes = allocatedBytes();
        WindowProfile.start();
    }

    /** This process's CPU nanoseconds and heap bytes allocated since {@link #markCost()} (-1: unknown). */
    private static String cost() {
        long cpu = processCpuNanos();
        long alloc = allocatedBytes();
        WindowProfile.stop();
        return (cpu < 0 ? -1 : cpu - costCpuNanos) + " " + (alloc < 0 ? -1 : alloc - costAllocBytes);
    }

    /**
     * CPU nanoseconds the calling thread has used (-1: unknown): around the put loop, what the application thread
     * spent working, without the time it waited (e.g. for room in a full replication queue).
     */
    static long threadCpuNanos() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        return mx.isCurrentThreadCpuTimeSupported() ? mx.getCurrentThreadCpuTime() : -1;
    }

    private static long processCpuNanos() {
        OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean // qualified: HotSpot's, beside the import
                ? ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime() : -1; // qualified: as above
    }

    /** Heap bytes all threads allocated, ended ones included (HotSpot's counters). */
    private static long allocatedBytes() {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        if (mx instanceof com.sun.management.ThreadMXBean) { // qualified: HotSpot's, beside the import
            com.sun.management.ThreadMXBean hs = (com.sun.management.ThreadMXBean) mx; // qualified: as above
            if (hs.isThreadAllocatedMemorySupported() && hs.isThreadAllocatedMemoryEnabled()) {
                return hs.getTotalThreadAllocatedBytes();
            }
        }
        return -1;
    }
}
