package io.ehrelay.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import com.codahale.metrics.Gauge;
import com.codahale.metrics.MetricRegistry;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;

/**
 * What this node knows of each peer, as gauges of {@code io.ehrelay:type=Peer,…,peer=<endpoint>,name=<metric>}:
 * {@code replicationLagMillis} (age of the oldest event this node has not yet had acknowledged by the peer:
 * queued, or sent and unsettled), {@code inFlightEvents}, {@code inFlightBytes}, {@code lastContactAgeMillis}
 * (since a batch was last delivered to or received from it) and {@code lastAgreementAgeMillis} (since
 * anti-entropy last found every cache equal with it); -1 for "never". Registered when the peer joins the
 * directory, removed when it leaves. Thread-safe.
 */
final class PeerStats {

    static final String[] METRICS = {"replicationLagMillis", "inFlightEvents", "inFlightBytes",
        "lastContactAgeMillis", "lastAgreementAgeMillis"};

    /** One peer's counts. */
    static final class Of {
        final AtomicLong inFlightEvents = new AtomicLong();
        final AtomicLong inFlightBytes = new AtomicLong();
        /** Enqueue time (nanoTime) of the oldest event of each batch in flight to the peer. */
        final Map<Object, Long> pending = new ConcurrentHashMap<>();
        volatile long lastContactNanos;
        volatile boolean contacted;
    }

    private final ReplicationMetrics metrics;
    private final Clock clock;
    /** The enqueue time (nanoTime) of the oldest event still queued, or {@link Long#MAX_VALUE}. */
    private final LongSupplier oldestQueued;
    private final AntiEntropy antiEntropy;
    private final Map<String, Of> peers = new ConcurrentHashMap<>();

    PeerStats(ReplicationMetrics metrics, Clock clock, LongSupplier oldestQueued, AntiEntropy antiEntropy) {
        this.metrics = metrics;
        this.clock = clock;
        this.oldestQueued = oldestQueued;
        this.antiEntropy = antiEntropy;
    }

    /**
     * The directory's peers now: gauges for newcomers, removed for those gone. One call at a time: a removal
     * running beside a registration of the same name could leave an MBean whose gauge nothing updates.
     */
    synchronized void peersChanged(List<Peer> now) {
        List<String> endpoints = new ArrayList<>();
        for (Peer p : now) {
            endpoints.add(p.endpoint());
            if (!peers.containsKey(p.endpoint())) {
                register(p.endpoint());
            }
        }
        for (String gone : new ArrayList<>(peers.keySet())) {
            if (!endpoints.contains(gone)) {
                peers.remove(gone);
                for (String m : METRICS) {
                    metrics.registry().remove(name(gone, m));
                }
            }
        }
    }

    private String name(String endpoint, String metric) {
        return ObjectNames.peerMetric(metrics.cacheManagerName(), metrics.transport(), endpoint, metric);
    }

    private void register(String endpoint) {
        Of of = new Of();
        if (peers.putIfAbsent(endpoint, of) != null) {
            return;
        }
        MetricRegistry r = metrics.registry();
        gauge(r, name(endpoint, "replicationLagMillis"), () -> lagMillis(of));
        gauge(r, name(endpoint, "inFlightEvents"), of.inFlightEvents::get);
        gauge(r, name(endpoint, "inFlightBytes"), of.inFlightBytes::get);
        gauge(r, name(endpoint, "lastContactAgeMillis"), () -> of.contacted
                ? TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - of.lastContactNanos) : -1L);
        gauge(r, name(endpoint, "lastAgreementAgeMillis"), () -> {
            Long at = antiEntropy.lastAgreement(endpoint);
            return at == null ? -1L : Math.max(0, clock.currentTimeMillis() - at);
        });
    }

    private static void gauge(MetricRegistry r, String name, Gauge<Long> g) {
        r.remove(name);
        r.register(name, g);
    }

    private long lagMillis(Of of) {
        long oldest = oldestQueued.getAsLong();
        for (Long pending : of.pending.values()) {
            oldest = Math.min(oldest, pending);
        }
        return oldest == Long.MAX_VALUE ? 0 : Math.max(0, TimeUnit.NANOSECONDS.toMillis(clock.nanoTime() - oldest));
    }

    /** A batch went out to {@code endpoint}: {@code events} events, {@code bytes} bytes, the oldest enqueued then. */
    void sent(String endpoint, Object batch, int events, long bytes, long oldestEnqueuedNanos) {
        Of of = peers.get(endpoint);
        if (of != null) {
            of.inFlightEvents.addAndGet(events);
            of.inFlightBytes.addAndGet(bytes);
            of.pending.put(batch, oldestEnqueuedNanos);
        }
    }

    /** The batch to {@code endpoint} settled: delivered ({@code ok}) or failed. */
    void settled(String endpoint, Object batch, int events, long bytes, boolean ok) {
        Of of = peers.get(endpoint);
        if (of != null && of.pending.remove(batch) != null) {
            of.inFlightEvents.addAndGet(-events);
            of.inFlightBytes.addAndGet(-bytes);
        }
        if (ok) {
            contact(endpoint);
        }
    }

    /** Something was received from, or delivered to, the peer. */
    void contact(String endpoint) {
        Of of = endpoint == null ? null : peers.get(endpoint);
        if (of != null) {
            of.lastContactNanos = clock.nanoTime();
            of.contacted = true;
        }
    }
}
