package io.ehrelay.internal.engine;

import java.nio.charset.StandardCharsets;

import io.ehrelay.internal.metrics.CacheMetrics;

/** A cache's handle on the node: its metrics and its queue lane. Immutable. */
public final class CacheBinding {
    final String cacheName;
    final byte[] nameUtf8;
    final CacheMetrics metrics;
    final int lane;

    CacheBinding(String cacheName, CacheMetrics metrics, int lane) {
        this.cacheName = cacheName;
        this.nameUtf8 = cacheName.getBytes(StandardCharsets.UTF_8);
        this.metrics = metrics;
        this.lane = lane;
    }

    public String cacheName() {
        return cacheName;
    }

    public CacheMetrics metrics() {
        return metrics;
    }
}
