package io.ehrelay.internal.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import com.codahale.metrics.MetricRegistry;
import org.junit.jupiter.api.Test;

class EventTimerTest {

    @Test
    void countsEvents_butKeepsOneSamplePerRun() {
        EventTimer t = ReplicationMetrics.eventTimer(new MetricRegistry(), "t");
        t.update(500, 2_000);
        t.update(1, 9_000);
        assertThat(t.getCount()).as("events").isEqualTo(501);
        assertThat(t.getSnapshot().size()).as("samples").isEqualTo(2);
        assertThat(t.getSnapshot().getMax()).isEqualTo(9_000);
        assertThat(t.getMeanRate()).as("a rate of events").isPositive();
        t.update(3, -1); // a clock that went backwards: the events count, the sample does not
        assertThat(t.getCount()).isEqualTo(504);
        assertThat(t.getSnapshot().size()).isEqualTo(2);
    }

    @Test
    void perRunRecording_matchesWhatWasDone() {
        ReplicationMetrics node = new ReplicationMetrics("cm", "test");
        CacheMetrics c = node.cache("c");
        c.queueAdd(10);
        c.queueAdd(20);
        c.queueRemove(2, 30);
        c.onSent(2, 30, 5_000);
        c.onReceived(2);
        c.onApplied(2, 8_000);
        MetricRegistry r = node.registry();
        assertThat(r.getCounters((name, m) -> name.contains("queue")).values()).hasSize(4)
                .allMatch(x -> x.getCount() == 0, "queue depth back to zero");
        assertThat(node.sendLatency.getCount()).isEqualTo(2);
        assertThat(node.applyLatency.getSnapshot().getMax()).as("the mean of the run").isEqualTo(4_000);
    }
}
