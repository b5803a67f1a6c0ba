package io.ehrelay.internal.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import com.codahale.metrics.Clock;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import org.junit.jupiter.api.Test;

class DeferredMeterTest {

    /** A clock the test moves. */
    private static final class ManualClock extends Clock {
        final AtomicLong nanos = new AtomicLong(1);

        @Override
        public long getTick() {
            return nanos.get();
        }
    }

    @Test
    void aReading_seesEveryEventMarkedLater() {
        DeferredMeter m = new DeferredMeter();
        m.markLater();
        m.markLater();
        m.markLater();
        assertThat(m.getCount()).isEqualTo(3);
        m.mark(2); // an ordinary mark still counts at once
        m.markLater();
        assertThat(m.getCount()).isEqualTo(6);
        assertThat(m.getMeanRate()).isPositive();
    }

    @Test
    void theRates_countWhatWasFlushedInTheTickItWasFlushedIn() {
        ManualClock clock = new ManualClock();
        DeferredMeter m = new DeferredMeter(clock);
        for (int i = 0; i < 500; i++) {
            m.markLater();
        }
        m.flush(); // the dispatcher took them in the first 5-second tick
        clock.nanos.addAndGet(TimeUnit.SECONDS.toNanos(6)); // past the first tick (5 s), not the second
        assertThat(m.getOneMinuteRate()).as("500 events in one tick of 5 s").isCloseTo(100.0, within(0.001));
        assertThat(m.getFiveMinuteRate()).isCloseTo(100.0, within(0.001));
        assertThat(m.getFifteenMinuteRate()).isCloseTo(100.0, within(0.001));

        clock.nanos.set(1);
        Meter plain = new Meter(clock);
        DeferredMeter unflushed = new DeferredMeter(clock);
        for (int i = 0; i < 500; i++) {
            unflushed.markLater();
            plain.mark();
        }
        clock.nanos.addAndGet(TimeUnit.SECONDS.toNanos(6)); // past the first tick (5 s), not the second
        assertThat(unflushed.getCount()).isEqualTo(plain.getCount());
        assertThat(unflushed.getOneMinuteRate()).as("marked later and never flushed: not in the rate until read")
                .isLessThan(plain.getOneMinuteRate());
    }

    @Test
    void concurrentMarksAndFlushes_loseNothing() throws Exception {
        DeferredMeter m = new DeferredMeter();
        AtomicBoolean done = new AtomicBoolean();
        Thread flusher = new Thread(() -> {
            while (!done.get()) {
                m.flush();
            }
        });
        flusher.start();
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread w = new Thread(() -> {
                for (int i = 0; i < 100_000; i++) {
                    m.markLater();
                }
            });
            writers.add(w);
            w.start();
        }
        for (Thread w : writers) {
            w.join();
        }
        done.set(true);
        flusher.join();
        assertThat(m.getCount()).isEqualTo(400_000);
        m.flush();
        assertThat(m.getCount()).as("flushing again adds nothing").isEqualTo(400_000);
    }

    @Test
    void enqueued_isExactPerCacheAndPerCacheManager_beforeAndAfterTheDispatcherTakesTheEvents() {
        ReplicationMetrics node = new ReplicationMetrics("cm", "test");
        CacheMetrics a = node.cache("a");
        CacheMetrics b = node.cache("b");
        a.queueAdd(10);
        a.onEnqueued();
        a.queueAdd(10);
        a.onEnqueued();
        b.queueAdd(10);
        b.onEnqueued();
        MetricRegistry r = node.registry();
        Meter cacheA = r.getMeters().get(a.name("enqueued"));
        Meter total = r.getMeters().get(node.name("enqueued"));
        assertThat(cacheA).isInstanceOf(DeferredMeter.class);
        assertThat(cacheA.getCount()).as("still queued").isEqualTo(2);
        assertThat(total.getCount()).isEqualTo(3);
        a.queueRemove(2, 20); // the dispatcher took a's events
        b.queueRemove(1, 10);
        assertThat(cacheA.getCount()).isEqualTo(2);
        assertThat(total.getCount()).isEqualTo(3);
    }
}
