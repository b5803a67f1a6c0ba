package io.ehrelay.internal.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * Benchmark (not a test): the heap a cache's {@link VersionTable} costs — per key the cache holds (the key is the
 * cache's, not counted), and per tombstone (its key object, a {@code Long} here, counted: the cache no longer
 * holds it). Prints bytes per entry, medians of 5 rounds of 100,000. Run:
 * {@code benchmarks/run VersionMemoryBench}.
 */
public final class VersionMemoryBench {

    private static final int N = 100_000;

    private VersionMemoryBench() {
    }

    private static long used() throws InterruptedException {
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(50);
        }
        Runtime r = Runtime.getRuntime();
        return r.totalMemory() - r.freeMemory();
    }

    public static void main(String[] args) throws Exception {
        List<Long> perEntry = new ArrayList<>();
        List<Long> perTombstone = new ArrayList<>();
        for (int round = 0; round < 5; round++) {
            List<Object> keys = new ArrayList<>(N);
            for (int i = 0; i < N; i++) {
                keys.add("key-" + i);
            }
            long before = used();
            VersionTable t = new VersionTable();
            for (int i = 0; i < N; i++) {
                Object k = keys.get(i);
                t.offer(k, new Version(1000L + i, 7, k.hashCode(), i, false), 1, 0, () -> { });
            }
            long after = used();
            perEntry.add((after - before) / N);
            VersionTable tombs = new VersionTable();
            long before2 = used();
            for (int i = 0; i < N; i++) {
                Long k = (long) i + 1_000_000L; // a key only the tombstone holds
                tombs.offer(k, new Version(1000L + i, 7, k.hashCode(), 0, true), 1, 0, () -> { });
            }
            long after2 = used();
            perTombstone.add((after2 - before2) / N);
            if (t.size() + tombs.size() != 2 * N || keys.isEmpty()) {
                throw new AssertionError("tables lost entries");
            }
        }
        perEntry.sort(null);
        perTombstone.sort(null);
        System.out.println("VersionTable, " + N + " entries, median of 5: " + perEntry.get(2)
                + " bytes per key held (all: " + perEntry + "), " + perTombstone.get(2)
                + " bytes per tombstone with its Long key (all: " + perTombstone + "); JVM "
                + System.getProperty("java.version") + ", compressed oops as the JVM chose");
    }
}
