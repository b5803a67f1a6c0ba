package io.ehrelay.internal.engine;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.ehrelay.internal.codec.AllowList;
import io.ehrelay.internal.codec.EventCodec;
import net.sf.ehcache.Element;

/**
 * Benchmark (not a test): what the sending side's class watch ({@link SentClasses}) adds to encoding a small
 * Java-serialized value. Prints the medians of interleaved rounds with and without it, and their ratio. Run:
 * {@code benchmarks/run SentClassesBench}.
 */
public final class SentClassesBench {

    private static final int EVENTS_PER_ROUND = 100_000;
    private static final int WARMUP_ROUNDS = 2;
    private static final int ROUNDS = 22;

    /** An application value of five classes (itself, String, ArrayList, HashMap, Integer). */
    static final class Order implements Serializable {
        private static final long serialVersionUID = 1L;
        final String id = "o-1";
        final long amount = 42;
        final List<String> lines = new ArrayList<>(Arrays.asList("a", "b", "c"));
        final Map<String, Integer> quantities = new HashMap<>();

        Order() {
            quantities.put("x", 1);
            quantities.put("y", 2);
        }
    }

    private SentClassesBench() {
    }

    public static void main(String[] args) throws Exception {
        SentClasses sent = new SentClasses(AllowList.withDefaults(Collections.singletonList("io.ehrelay.**")), false);
        Order order = new Order();
        List<Double> with = new ArrayList<>();
        List<Double> without = new ArrayList<>();
        long bytes = 0;
        for (int round = 0; round < ROUNDS; round++) {
            boolean watched = round % 2 == 0;
            long t0 = System.nanoTime();
            for (int i = 0; i < EVENTS_PER_ROUND; i++) {
                Element e = new Element(i, order);
                byte[] event = watched ? EventCodec.encodePut("c", e, sent.forCache("c")) : EventCodec.encodePut("c", e);
                bytes += event.length;
            }
            double nanosPerEvent = (System.nanoTime() - t0) / (double) EVENTS_PER_ROUND;
            if (round >= WARMUP_ROUNDS) {
                (watched ? with : without).add(nanosPerEvent);
            }
        }
        Collections.sort(with);
        Collections.sort(without);
        double a = without.get(without.size() / 2);
        double b = with.get(with.size() / 2);
        System.out.printf("encodePut of a %d-byte event holding a 5-class Serializable value, ns/event, medians of %d "
                + "interleaved rounds of %d: without the class watch %.0f, with it %.0f, ratio %.3f%n",
                bytes / ((long) ROUNDS * EVENTS_PER_ROUND), with.size(), EVENTS_PER_ROUND, a, b, b / a);
    }
}
