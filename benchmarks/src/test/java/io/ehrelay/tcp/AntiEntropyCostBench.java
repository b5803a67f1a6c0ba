package io.ehrelay.tcp;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import javax.management.ObjectName;

import com.sun.management.OperatingSystemMXBean;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.metrics.ObjectNames;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;

/**
 * Benchmark (not a test): what an anti-entropy round costs when nothing differs. Two TCP nodes in this JVM hold
 * the same 100,000 entries of 1,280 B; the bench runs {@code checkNow} (a round with the peer over every
 * replicated cache, as the schedule does) 200 times and prints, per round, the bytes fetched and the process
 * CPU (both nodes: the asking and the serving side), median of the rounds. Run:
 * {@code benchmarks/run AntiEntropyCostBench [entries] [differing]}.
 *
 * <p>With {@code differing}, every key's version differs between the nodes, as under steady writes, where every
 * leaf holds a write still in flight: the nodes run {@code -Dehrelay.ordering=arrival} (the reader stamps each
 * write anew on arrival), and the rounds run within one interval of the writes, so that none is settled enough to
 * repair. It then runs 20 rounds and also prints the heap both nodes allocated per round: what listing the
 * differing leaves costs. With {@code steady <puts/s>}, the peer writes random keys of the cache at that rate
 * (1,280 B each) while 20 rounds run: the leaves its writes in flight make differ (the heap figure then includes
 * the writes' own).
 */
public final class AntiEntropyCostBench {

    /** The TCP transport on 127.0.0.1, any free port. */
    private static final TransportFixture TCP = TransportFixture.of(TcpSettings.SCHEME, TcpSettings.NAME,
            TcpCacheManagerPeerProviderFactory.class, TcpCacheManagerPeerListenerFactory.class,
            TcpCacheReplicatorFactory.class, TcpBootstrapCacheLoaderFactory.class);

    private AntiEntropyCostBench() {
    }

    public static void main(String[] args) throws Exception {
        int entries = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        boolean differing = args.length > 1 && args[1].equals("differing");
        int steadyRate = args.length > 2 && args[1].equals("steady") ? Integer.parseInt(args[2]) : 0;
        if (differing) {
            System.setProperty("ehrelay.ordering", "arrival");
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) // qualified: HotSpot's
                ManagementFactory.getThreadMXBean();
        try (ContractCluster cluster = new ContractCluster(TCP)) {
            CacheManager a = cluster.start("ae-a", "antiEntropyIntervalMillis=0");
            CacheManager b = cluster.start("ae-b", "antiEntropyIntervalMillis=0");
            byte[] value = new byte[1280];
            for (int i = 0; i < entries; i++) {
                a.getEhcache("async").put(new Element("k" + i, value));
            }
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (b.getEhcache("async").getSize() < entries && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            ObjectName convergence = ObjectNames.of(ObjectNames.convergence(a.getName(), "tcp"));
            Jmx ja = new Jmx(a.getName(), "tcp");
            OperatingSystemMXBean os = (OperatingSystemMXBean)
                    ManagementFactory.getOperatingSystemMXBean();
            List<Long> cpuMicros = new ArrayList<>();
            List<Long> bytes = new ArrayList<>();
            List<Long> allocated = new ArrayList<>();
            String result = "";
            AtomicBoolean writing = new AtomicBoolean(steadyRate > 0);
            Thread writer = new Thread(() -> {
                Random random = new Random(1);
                long start = System.nanoTime();
                long done = 0;
                while (writing.get()) {
                    long due = (System.nanoTime() - start) * steadyRate / 1_000_000_000L;
                    for (; done < due; done++) {
                        b.getEhcache("async").put(new Element("k" + random.nextInt(entries), new byte[1280]));
                    }
                    LockSupport.parkNanos(1_000_000);
                }
            }, "steady-writer");
            if (steadyRate > 0) {
                writer.start();
                Thread.sleep(1000);
            }
            for (int round = 0; round < (differing || steadyRate > 0 ? 20 : 200); round++) {
                long bytes0 = ja.managerGauge("antiEntropyBytes").longValue();
                long cpu0 = os.getProcessCpuTime();
                long heap0 = threads.getTotalThreadAllocatedBytes();
                result = (String) ManagementFactory.getPlatformMBeanServer().invoke(convergence, "checkNow",
                        new Object[0], new String[0]);
                allocated.add(threads.getTotalThreadAllocatedBytes() - heap0);
                cpuMicros.add((os.getProcessCpuTime() - cpu0) / 1000);
                bytes.add(ja.managerGauge("antiEntropyBytes").longValue() - bytes0);
            }
            writing.set(false);
            writer.join(10_000);
            allocated.sort(null);
            long totalCpu = 0;
            for (long c : cpuMicros) {
                totalCpu += c;
            }
            cpuMicros.sort(null);
            bytes.sort(null);
            System.out.println("anti-entropy round, " + entries + (differing ? " entries whose versions all differ"
                    : steadyRate > 0 ? " entries, the peer writing " + steadyRate + " puts/s," : " equal entries") + " in one cache (+" + (a.getCacheNames()
                    .length - 1) + " other replicated caches), one peer, TCP: median " + bytes.get(bytes.size() / 2)
                    + " bytes fetched (mean " + bytes.stream().mapToLong(Long::longValue).sum() / bytes.size() + ", max "
                    + bytes.get(bytes.size() - 1) + "); process CPU "
                    + totalCpu / cpuMicros.size() + " us per round on average over "
                    + cpuMicros.size() + " rounds (the CPU clock ticks in 10 ms here: median " + cpuMicros.get(cpuMicros.size() / 2)
                    + ", max " + cpuMicros.get(cpuMicros.size() - 1) + "); last check: " + result
                    + "; keysRepaired " + ja.cacheCount("async", "keysRepaired") + "; heap allocated per round "
                    + "(both nodes): median " + allocated.get(allocated.size() / 2) / 1024 + " KB, max "
                    + allocated.get(allocated.size() - 1) / 1024 + " KB");
        }
    }
}
