package io.ehrelay.internal.engine;

import java.nio.charset.StandardCharsets;

import com.codahale.metrics.Gauge;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.MetricNames;

/** A cache's handle on the node: its metrics, its queue lane and the order of its writes. */
public final class CacheBinding {
    final String cacheName;
    final byte[] nameUtf8;
    final CacheMetrics metrics;
    final int lane;
    /** The newest write of each key (see {@link Ordering}). */
    final VersionTable versions = new VersionTable();

    CacheBinding(String cacheName, CacheMetrics metrics, int lane) {
        this.cacheName = cacheName;
        this.nameUtf8 = cacheName.getBytes(StandardCharsets.UTF_8);
        this.metrics = metrics;
        this.lane = lane;
        metrics.gauge(MetricNames.TOMBSTONES, (Gauge<Integer>) versions::tombstones);
        metrics.gauge(MetricNames.VERSIONS, (Gauge<Integer>) versions::size);
    }

    public String cacheName() {
        return cacheName;
    }

    public CacheMetrics metrics() {
        return metrics;
    }
}
