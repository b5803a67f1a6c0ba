package io.ehrelay.contract;

import java.time.Duration;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/** Polls a condition with a deadline instead of sleeping a fixed time. */
public final class Await {

    private Await() {
    }

    /**
     * Polls until {@code condition} holds. A condition that throws an {@link AssertionError} (e.g. an MBean not
     * registered yet) counts as not yet true; the last such error is reported if time runs out.
     */
    public static void until(Duration timeout, BooleanSupplier condition, Supplier<String> whatFailed) {
        long deadline = System.nanoTime() + timeout.toNanos();
        AssertionError last = null;
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (AssertionError e) {
                last = e;
            }
            if (System.nanoTime() > deadline) {
                String what;
                try {
                    what = whatFailed.get();
                } catch (AssertionError e) {
                    what = e.getMessage();
                }
                AssertionError failure = new AssertionError("not true within " + timeout + ": " + what);
                if (last != null) {
                    failure.addSuppressed(last);
                }
                throw failure;
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted");
            }
        }
    }

    public static void until(BooleanSupplier condition, Supplier<String> whatFailed) {
        until(Duration.ofSeconds(30), condition, whatFailed);
    }

    /**
     * Polls until two readings, taken one after the other, are equal: each may move between the two reads (a
     * counter marked in two steps, a thread starting), so one unequal pair proves nothing. Reports the last pair.
     */
    public static void untilEqual(LongSupplier first, LongSupplier second, BiFunction<Long, Long, String> whatFailed) {
        long[] last = new long[2];
        until(() -> {
            last[0] = first.getAsLong();
            last[1] = second.getAsLong();
            return last[0] == last[1];
        }, () -> whatFailed.apply(last[0], last[1]));
    }
}
