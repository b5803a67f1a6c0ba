package io.ehrelay.internal.metrics;

import com.codahale.metrics.Clock;
import com.codahale.metrics.Histogram;
import com.codahale.metrics.Meter;
import com.codahale.metrics.SlidingWindowReservoir;
import com.codahale.metrics.Timer;

/**
 * A {@link Timer} for events handled in runs (the events of one cache in one batch): its count and rates are of
 * events, as a timer updated once per event would show, while its distribution holds one sample per run. So the
 * JMX attributes keep their meaning for counts and rates, and a run of a thousand small events costs one sample
 * and one meter tick instead of a thousand of each. Thread-safe.
 */
final class EventTimer extends Timer {

    private final Meter events;
    private final Histogram samples;

    EventTimer() {
        this(new Meter(), new Histogram(new SlidingWindowReservoir(ReplicationMetrics.WINDOW)));
    }

    private EventTimer(Meter events, Histogram samples) {
        super(events, samples, Clock.defaultClock());
        this.events = events;
        this.samples = samples;
    }

    /** {@code count} events, for which one duration stands: {@code nanos}. */
    void update(int count, long nanos) {
        if (nanos >= 0) {
            samples.update(nanos);
        }
        events.mark(count);
    }

    /** Events, not samples (a plain timer counts its samples). */
    @Override
    public long getCount() {
        return events.getCount();
    }
}
