package io.ehrelay.internal.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;

import io.ehrelay.spi.Clock;

/**
 * Benchmark (not a test): the time to record a new key's version in a cache's {@link VersionTable}, as the
 * writing node does for each put of its application ({@code local}, a pending put) and the receiving node for
 * each remote put ({@code offer}), with the collector's share included: the last three rounds' tables stay live,
 * as a cache's versions do. Prints nanoseconds per key, the median of the rounds after the warm-up ones. Run:
 * {@code benchmarks/run VersionTableSpeedBench [keys] [rounds]} (320,000 sequential {@code Integer} keys, as in
 * the replay's E2, and 15 rounds by default).
 */
public final class VersionTableSpeedBench {

    private static final int WARM_UP_ROUNDS = 5;
    private static final long SELF = 7;

    private VersionTableSpeedBench() {
    }

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 320_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        if (rounds <= WARM_UP_ROUNDS) {
            throw new IllegalArgumentException("rounds must exceed the " + WARM_UP_ROUNDS + " warm-up rounds");
        }
        Integer[] keys = new Integer[n];
        for (int i = 0; i < n; i++) {
            keys[i] = i;
        }
        Hlc hlc = new Hlc(Clock.SYSTEM);
        VersionTable.StoreCheck<Object, Object> held = (store, key, written) -> VersionTable.CURRENT;
        Runnable write = () -> { };
        List<Double> local = new ArrayList<>();
        List<Double> offer = new ArrayList<>();
        Deque<VersionTable> live = new ArrayDeque<>();
        for (int round = 0; round < rounds; round++) {
            VersionTable writer = new VersionTable();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                writer.local(keys[i], i * 0x9E3779B1, 0, false, true, hlc, SELF, 0, held, null, null);
            }
            long t1 = System.nanoTime();
            VersionTable reader = new VersionTable();
            for (int i = 0; i < n; i++) {
                reader.offer(keys[i], new Version(1000L + i, 9, i * 0x9E3779B1, 5, false), SELF, 0, write);
            }
            long t2 = System.nanoTime();
            if (writer.size() != n || reader.size() != n) {
                throw new AssertionError("tables lost keys: " + writer.size() + ", " + reader.size());
            }
            live.addLast(writer);
            live.addLast(reader);
            while (live.size() > 6) {
                live.removeFirst();
            }
            if (round >= WARM_UP_ROUNDS) {
                local.add((t1 - t0) / (double) n);
                offer.add((t2 - t1) / (double) n);
            }
        }
        Collections.sort(local);
        Collections.sort(offer);
        System.out.printf("VersionTable, %,d new keys per round, median of %d rounds: local %.0f ns per key "
                        + "(range %.0f-%.0f), offer %.0f ns per key (range %.0f-%.0f); JVM %s%n", n, local.size(),
                local.get(local.size() / 2), local.get(0), local.get(local.size() - 1),
                offer.get(offer.size() / 2), offer.get(0), offer.get(offer.size() - 1),
                System.getProperty("java.version"));
    }
}
