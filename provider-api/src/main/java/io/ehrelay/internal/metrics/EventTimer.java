package io.ehrelay.internal.metrics;

import java.util.concurrent.TimeUnit;

import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.SlidingWindowReservoir;
import com.codahale.metrics.Snapshot;
import com.codahale.metrics.Timer;

/**
 * A {@link Timer} for events handled in runs (the events of one cache in one batch): its count and rates are of
 * events, as a timer updated once per event would show, while its distribution holds one sample per run. So the
 * JMX attributes keep their meaning for counts and rates, and a run of a thousand small events costs one sample
 * and one meter tick instead of a thousand of each. Thread-safe.
 *
 * <p>It keeps its own meter and histogram and answers every reading from them (metrics-core 3.0, which ehrelay
 * supports, cannot hand a timer its parts); the timer it extends holds nothing.
 */
final class EventTimer extends Timer {

    private final Meter events = new Meter();
    private final Histogram samples = new Histogram(new SlidingWindowReservoir(ReplicationMetrics.WINDOW));

    EventTimer() {
        super(new SlidingWindowReservoir(1)); // unused: every method below answers from events and samples
    }

    /** {@code count} events, for which one duration stands: {@code nanos}; a negative one is not sampled. */
    void update(int count, long nanos) {
        if (nanos >= 0) {
            samples.update(nanos);
        }
        events.mark(count);
    }

    /** One event of {@code duration}. */
    @Override
    public void update(long duration, TimeUnit unit) {
        update(1, unit.toNanos(duration));
    }

    /** Events, not samples. */
    @Override
    public long getCount() {
        return events.getCount();
    }

    @Override
    public double getFifteenMinuteRate() {
        return events.getFifteenMinuteRate();
    }

    @Override
    public double getFiveMinuteRate() {
        return events.getFiveMinuteRate();
    }

    @Override
    public double getMeanRate() {
        return events.getMeanRate();
    }

    @Override
    public double getOneMinuteRate() {
        return events.getOneMinuteRate();
    }

    @Override
    public Snapshot getSnapshot() {
        return samples.getSnapshot();
    }
}
