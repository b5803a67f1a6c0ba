package io.ehrelay.tcp;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
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
 * {@code benchmarks/run AntiEntropyCostBench [entries]}.
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
            String result = "";
            for (int round = 0; round < 200; round++) {
                long bytes0 = ja.managerGauge("antiEntropyBytes").longValue();
                long cpu0 = os.getProcessCpuTime();
                result = (String) ManagementFactory.getPlatformMBeanServer().invoke(convergence, "checkNow",
                        new Object[0], new String[0]);
                cpuMicros.add((os.getProcessCpuTime() - cpu0) / 1000);
                bytes.add(ja.managerGauge("antiEntropyBytes").longValue() - bytes0);
            }
            long totalCpu = 0;
            for (long c : cpuMicros) {
                totalCpu += c;
            }
            cpuMicros.sort(null);
            bytes.sort(null);
            System.out.println("anti-entropy round, " + entries + " equal entries in one cache (+" + (a.getCacheNames()
                    .length - 1) + " other replicated caches), one peer, TCP: median " + bytes.get(bytes.size() / 2)
                    + " bytes fetched; process CPU " + totalCpu / cpuMicros.size() + " us per round on average over "
                    + cpuMicros.size() + " rounds (the CPU clock ticks in 10 ms here: median " + cpuMicros.get(cpuMicros.size() / 2)
                    + ", max " + cpuMicros.get(cpuMicros.size() - 1) + "); last check: " + result
                    + "; keysRepaired " + ja.cacheCount("async", "keysRepaired"));
        }
    }
}
