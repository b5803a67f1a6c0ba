package io.ehrelay.internal.codec;

import java.io.ByteArrayOutputStream;
import java.io.ObjectOutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.ehrelay.codec.RejectedClassException;

/**
 * What a nested-set bomb costs to read, by depth, so that {@code maxHashWork}'s default can be stated in CPU time:
 * for each depth, the value's size, its hashing work (the sum {@link SerialStreamCheck} compares with the bound),
 * the CPU time of the check alone, and the CPU time of the JDK reading it (the bound lifted), median of 5.
 *
 * <p>Run: {@code benchmarks/run HashWorkBench [maxDepth]}.
 */
public final class HashWorkBench {

    private HashWorkBench() {
    }

    public static void main(String[] args) throws Exception {
        int maxDepth = args.length > 0 ? Integer.parseInt(args[0]) : 22;
        ThreadMXBean cpu = ManagementFactory.getThreadMXBean();
        CodecLimits unbounded = new CodecLimits(1 << 26, 64, 1 << 24, 100_000_000, Long.MAX_VALUE,
                CodecLimits.defaults().allowList());
        CodecLimits defaults = CodecLimits.defaults();
        System.out.printf("%5s %7s %12s %12s %14s %s%n", "depth", "bytes", "hash work", "check µs", "JDK read ms",
                "with defaults");
        for (int depth = 10; depth <= maxDepth; depth += 2) {
            Object bomb = SetBombs.bomb(depth);
            byte[] value = serialized(bomb);
            ByteSink sink = new ByteSink(64);
            ValueCodec.write(sink, bomb);
            byte[] encoded = sink.toByteArray();
            long work = hashWork(value, depth);
            List<Long> checks = new ArrayList<>();
            List<Long> reads = new ArrayList<>();
            for (int rep = 0; rep < 5; rep++) {
                long t0 = cpu.getCurrentThreadCpuTime();
                SerialStreamCheck.check(value, 0, value.length, unbounded, "bench");
                long t1 = cpu.getCurrentThreadCpuTime();
                ValueCodec.read(new ByteSource(encoded, 0, encoded.length), unbounded, "bench");
                long t2 = cpu.getCurrentThreadCpuTime();
                checks.add(t1 - t0);
                reads.add(t2 - t1 - (t1 - t0));
            }
            String withDefaults;
            try {
                SerialStreamCheck.check(value, 0, value.length, defaults, "bench");
                withDefaults = "read";
            } catch (RejectedClassException e) {
                withDefaults = "refused";
            }
            System.out.printf("%5d %7d %,12d %12.0f %14.1f %s%n", depth, value.length, work,
                    median(checks) / 1e3, median(reads) / 1e6, withDefaults);
        }
    }

    /** The smallest bound that admits the value: found by halving between 1 and its reach. */
    private static long hashWork(byte[] value, int depth) throws Exception {
        long lo = 1;
        long hi = 1L << (depth + 4);
        while (lo < hi) {
            long mid = (lo + hi) >>> 1;
            try {
                SerialStreamCheck.check(value, 0, value.length, new CodecLimits(1 << 26, 64, 1 << 24, 100_000_000,
                        mid, CodecLimits.defaults().allowList()), "bench");
                hi = mid;
            } catch (RejectedClassException e) {
                lo = mid + 1;
            }
        }
        return lo;
    }

    private static long median(List<Long> xs) {
        List<Long> sorted = new ArrayList<>(xs);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }


    private static byte[] serialized(Object o) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(o);
        }
        return bytes.toByteArray();
    }
}
