package io.ehrelay.contract;

import java.time.Duration;
import java.util.function.BooleanSupplier;
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
}
