package io.ehrelay.contract;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import javax.management.ObjectName;

import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;

/**
 * Writers on several nodes hitting the same keys at once, as an application with replicated caches would, and
 * the check that the nodes end with the same entries. Used by the contract suite (short runs) and the
 * convergence profile (many long runs per transport).
 */
public final class ConvergenceWorkload {

    private ConvergenceWorkload() {
    }

    /** What a run did. */
    public static final class Result {
        public final long puts;
        public final long removes;
        public final long removeAlls;

        Result(long puts, long removes, long removeAlls) {
            this.puts = puts;
            this.removes = removes;
            this.removeAlls = removeAlls;
        }

        @Override
        public String toString() {
            return puts + " puts, " + removes + " removes, " + removeAlls + " removeAlls";
        }
    }

    /**
     * Runs {@code threadsPerCache} writers on each cache for {@code millis}, together at most
     * {@code opsPerSecondPerCache} operations per second per cache, over keys {@code k0 … k<keys-1>}: about
     * 70 % puts (every value unique: node, thread and sequence), 30 % removes, and with {@code removeAll} one
     * removeAll on each cache halfway.
     *
     * @param removeFraction the share of removes among the operations, 0 to 1
     */
    public static Result run(List<Ehcache> caches, int keys, long millis, int threadsPerCache,
                             int opsPerSecondPerCache, double removeFraction, boolean removeAll, long seed)
            throws InterruptedException {
        double[] fractions = new double[caches.size()];
        Arrays.fill(fractions, removeFraction);
        return run(caches, keys, millis, threadsPerCache, opsPerSecondPerCache, fractions, removeAll, seed);
    }

    /** As above, with a share of removes per cache (1: the writers of that cache only remove). */
    public static Result run(List<Ehcache> caches, int keys, long millis, int threadsPerCache,
                             int opsPerSecondPerCache, double[] removeFractions, boolean removeAll, long seed)
            throws InterruptedException {
        AtomicLong puts = new AtomicLong();
        AtomicLong removes = new AtomicLong();
        AtomicLong clears = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        long intervalNanos = TimeUnit.SECONDS.toNanos(1) * threadsPerCache / Math.max(1, opsPerSecondPerCache);
        for (int c = 0; c < caches.size(); c++) {
            Ehcache cache = caches.get(c);
            double removeFraction = removeFractions[c];
            for (int t = 0; t < threadsPerCache; t++) {
                String writer = "n" + c + "t" + t;
                boolean clearing = removeAll && t == 0;
                Random random = new Random(seed * 31 + c * 7 + t);
                Thread thread = new Thread(() -> {
                    try {
                        start.await();
                        long begin = System.nanoTime();
                        long end = begin + TimeUnit.MILLISECONDS.toNanos(millis);
                        boolean cleared = !clearing;
                        long next = begin;
                        for (long seq = 0; System.nanoTime() - end < 0; seq++) {
                            String key = "k" + random.nextInt(keys);
                            if (!cleared && System.nanoTime() - begin > TimeUnit.MILLISECONDS.toNanos(millis / 2)) {
                                cache.removeAll();
                                clears.incrementAndGet();
                                cleared = true;
                            } else if (random.nextDouble() < removeFraction) {
                                cache.remove(key);
                                removes.incrementAndGet();
                            } else {
                                cache.put(new Element(key, writer + "-" + seq));
                                puts.incrementAndGet();
                            }
                            next += intervalNanos;
                            long ahead = next - System.nanoTime();
                            if (ahead > 200_000) {
                                LockSupport.parkNanos(ahead);
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "writer-" + writer);
                threads.add(thread);
                thread.start();
            }
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new AssertionError("a writer failed", failure.get());
        }
        return new Result(puts.get(), removes.get(), clears.get());
    }

    /** A cache's entries, key to value, sorted by key. */
    public static Map<String, Object> contents(Ehcache cache) {
        Map<String, Object> out = new TreeMap<>();
        for (Object key : cache.getKeys()) {
            Element e = cache.getQuiet(key);
            if (e != null && !e.isExpired()) {
                out.put(String.valueOf(key), e.getObjectValue());
            }
        }
        return out;
    }

    /** The keys on which the caches' entries differ (present on some only, or with other values). */
    public static List<String> differing(List<Ehcache> caches) {
        List<Map<String, Object>> all = new ArrayList<>();
        TreeSet<String> keys = new TreeSet<>();
        for (Ehcache c : caches) {
            Map<String, Object> m = contents(c);
            all.add(m);
            keys.addAll(m.keySet());
        }
        List<String> out = new ArrayList<>();
        for (String key : keys) {
            Object first = all.get(0).get(key);
            for (Map<String, Object> m : all) {
                if (!Objects.deepEquals(first, m.get(key)) || m.containsKey(key) != all.get(0).containsKey(key)) {
                    out.add(key);
                    break;
                }
            }
        }
        return out;
    }

    /**
     * Waits until every cache holds the same entries; returns how long that took from the call, in ms.
     *
     * @throws AssertionError naming the differing keys and their values when they do not agree within
     *                        {@code timeout}
     */
    public static long awaitEqual(List<Ehcache> caches, Duration timeout) {
        long t0 = System.nanoTime();
        long deadline = t0 + timeout.toNanos();
        while (true) {
            List<String> diff = differing(caches);
            if (diff.isEmpty()) {
                return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            }
            if (System.nanoTime() - deadline > 0) {
                StringBuilder sb = new StringBuilder(diff.size() + " keys differ after " + timeout.toMillis()
                        + " ms:");
                for (String key : diff.subList(0, Math.min(5, diff.size()))) {
                    sb.append(' ').append(key).append('=');
                    List<Object> values = new ArrayList<>();
                    for (Ehcache c : caches) {
                        Element e = c.getQuiet(key);
                        values.add(e == null ? null : e.getObjectValue());
                    }
                    sb.append(values);
                }
                sb.append(nodeCounters(caches));
                throw new AssertionError(sb.toString());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /**
     * Every non-zero ehrelay counter of the nodes holding {@code caches} (their CacheManager's, and their copy of the
     * cache's), so that a divergence names what each node saw: gaps, resyncs, drops, conflicts, refused posts.
     */
    static String nodeCounters(List<Ehcache> caches) {
        StringBuilder sb = new StringBuilder();
        for (Ehcache c : caches) {
            String manager = c.getCacheManager() == null ? "?" : c.getCacheManager().getName();
            sb.append("\n  ").append(manager).append(':');
            String quoted = ObjectName.quote(manager);
            Set<ObjectName> names = new TreeSet<>();
            names.addAll(safeQuery("io.ehrelay:type=CacheManager,cacheManager=" + quoted + ",*"));
            names.addAll(safeQuery("io.ehrelay:type=Cache,cacheManager=" + quoted + ",cache="
                    + ObjectName.quote(c.getName()) + ",*"));
            names.addAll(safeQuery("io.ehrelay:type=CacheManager,cacheManager=" + manager + ",*"));
            names.addAll(safeQuery("io.ehrelay:type=Cache,cacheManager=" + manager + ",cache=" + c.getName() + ",*"));
            for (ObjectName n : names) {
                Object v;
                try {
                    v = ManagementFactory.getPlatformMBeanServer().getAttribute(n, "Count");
                } catch (Exception e) {
                    continue; // a gauge or a timer: not a count
                }
                if (v instanceof Number && ((Number) v).longValue() != 0) {
                    sb.append(' ').append(n.getKeyProperty("type").equals("Cache") ? "cache." : "")
                            .append(n.getKeyProperty("name")).append('=').append(v);
                }
            }
        }
        return sb.toString();
    }

    private static Set<ObjectName> safeQuery(String pattern) {
        try {
            return ManagementFactory.getPlatformMBeanServer()
                    .queryNames(new ObjectName(pattern), null);
        } catch (Exception e) {
            return Collections.emptySet(); // a name that is not valid unquoted: the other form serves
        }
    }
}
