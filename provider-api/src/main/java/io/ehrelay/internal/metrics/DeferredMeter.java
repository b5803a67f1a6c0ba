package io.ehrelay.internal.metrics;

import java.util.concurrent.atomic.LongAdder;

import com.codahale.metrics.Clock;
import com.codahale.metrics.Meter;

/**
 * A {@link Meter} marked on the application's thread once per put: {@link #markLater} is one add to a
 * {@link LongAdder}, where {@link Meter#mark} also reads the clock and updates three moving averages. What was
 * marked later reaches the meter's count and rates at the next {@link #flush}: the dispatcher flushes once per run
 * of a cache's events in a batch (so within milliseconds while events flow), and every reading flushes first, so
 * the count a reporter or a JMX client reads is exact. Only the rates can lag: events queued in a lane that no
 * dispatcher drains (a peer stuck) enter them when next read. Thread-safe.
 */
final class DeferredMeter extends Meter {

    private final LongAdder pending = new LongAdder();
    /** How much of {@link #pending}'s sum the meter has been given; guarded by {@code this}. */
    private long flushed;

    DeferredMeter() {
    }

    /** With the clock the meter's rates tick by (tests). */
    DeferredMeter(Clock clock) {
        super(clock);
    }

    /** Counts one event, handed to the meter at the next {@link #flush}. */
    void markLater() {
        pending.increment();
    }

    /** Hands the meter what was marked later since the last flush. */
    synchronized void flush() {
        // the adder only grows, so its sum never falls below what an earlier flush saw
        long total = pending.sum();
        long n = total - flushed;
        if (n > 0) {
            flushed = total;
            super.mark(n);
        }
    }

    @Override
    public long getCount() {
        flush();
        return super.getCount();
    }

    @Override
    public double getMeanRate() {
        flush();
        return super.getMeanRate();
    }

    @Override
    public double getOneMinuteRate() {
        flush();
        return super.getOneMinuteRate();
    }

    @Override
    public double getFiveMinuteRate() {
        flush();
        return super.getFiveMinuteRate();
    }

    @Override
    public double getFifteenMinuteRate() {
        flush();
        return super.getFifteenMinuteRate();
    }
}
