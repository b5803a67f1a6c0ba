package io.ehrelay.spi;

import java.util.concurrent.TimeUnit;

/**
 * The time source of a node: everything whose behaviour depends on elapsed time (reconnect backoff, batch
 * linger, heartbeat expiry, peer timeout, log rate limiting, state-transfer expiry, synchronous deadlines) reads
 * it here, so tests can move time instead of sleeping. {@link #SYSTEM} in production. Implementations are
 * thread-safe.
 */
public interface Clock {

    /** The JVM's clocks. */
    Clock SYSTEM = new Clock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public long currentTimeMillis() {
            return System.currentTimeMillis();
        }

        @Override
        public String toString() {
            return "Clock.SYSTEM";
        }
    };

    /** A monotonic reading in nanoseconds, like {@link System#nanoTime()}: only differences mean anything. */
    long nanoTime();

    /** Wall-clock milliseconds since the epoch, like {@link System#currentTimeMillis()}; for display only. */
    long currentTimeMillis();

    /** {@code nanoTime()} in milliseconds. */
    default long millis() {
        return TimeUnit.NANOSECONDS.toMillis(nanoTime());
    }
}
