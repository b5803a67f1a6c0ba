package io.ehrelay.internal.metrics;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import com.codahale.metrics.Counter;
import com.codahale.metrics.Gauge;
import com.codahale.metrics.Meter;
import com.codahale.metrics.MetricRegistry;
import com.codahale.metrics.Timer;
import io.ehrelay.metrics.ObjectNames;

/**
 * The metrics of one replicated cache; every count also adds to its CacheManager's totals. Also tracks which
 * ehrelay threads have served the cache (sent or applied its events): {@code threadsPerRegion} is how many of
 * them are alive, and stays flat however many caches the CacheManager replicates. Thread-safe.
 */
public final class CacheMetrics {

    private final ReplicationMetrics node;
    private final String cacheName;
    private final DeferredMeter enqueued;
    private final Meter sent;
    private final Meter received;
    private final Meter applied;
    private final Meter dropped;
    private final Meter failed;
    private final Meter rejected;
    private final Meter applyFailed;
    private final Meter unencodable;
    private final Meter notReplicated;
    private final Meter invalidated;
    private final Counter bytesSent;
    private final Counter queueEvents;
    private final Counter queueBytes;
    private final EventTimer sendLatency;
    private final Timer syncRoundTrip;
    private final EventTimer applyLatency;
    private final Meter bootstraps;
    private final Meter bootstrapFailures;
    private final Timer bootstrapDuration;
    private final Set<Thread> servingThreads = ConcurrentHashMap.newKeySet();
    /** Per cache, then the CacheManager's total: the order of writes (see docs/reliability.md). */
    private final Meter[] conflictsLocalWon;
    private final Meter[] localWritesSuperseded;
    private final Meter[] staleDiscarded;
    private final Meter[] keysRepaired;
    private final Meter[] antiEntropyRounds;
    private final Meter[] antiEntropyMismatches;

    CacheMetrics(ReplicationMetrics node, String cacheName) {
        this.node = node;
        this.cacheName = cacheName;
        MetricRegistry r = node.registry();
        enqueued = ReplicationMetrics.deferredMeter(r, name("enqueued"));
        sent = r.meter(name("sent"));
        received = r.meter(name("received"));
        applied = r.meter(name("applied"));
        dropped = r.meter(name("dropped"));
        failed = r.meter(name("failed"));
        rejected = r.meter(name("rejected"));
        applyFailed = r.meter(name("applyFailed"));
        unencodable = r.meter(name("unencodable"));
        notReplicated = r.meter(name("notReplicated"));
        invalidated = r.meter(name("invalidated"));
        bytesSent = r.counter(name("bytesSent"));
        queueEvents = r.counter(name("queueEvents"));
        queueBytes = r.counter(name("queueBytes"));
        sendLatency = ReplicationMetrics.eventTimer(r, name("sendLatency"));
        syncRoundTrip = ReplicationMetrics.timer(r, name("syncRoundTrip"));
        applyLatency = ReplicationMetrics.eventTimer(r, name("applyLatency"));
        bootstraps = r.meter(name("bootstraps"));
        bootstrapFailures = r.meter(name("bootstrapFailures"));
        bootstrapDuration = ReplicationMetrics.timer(r, name("bootstrapDuration"));
        r.register(name("threadsPerRegion"), (Gauge<Integer>) this::threadsPerRegion);
        conflictsLocalWon = pair(r, "conflictsLocalWon");
        localWritesSuperseded = pair(r, "localWritesSuperseded");
        staleDiscarded = pair(r, "staleDiscarded");
        keysRepaired = pair(r, "keysRepaired");
        antiEntropyRounds = pair(r, "antiEntropyComparisons");
        antiEntropyMismatches = pair(r, "antiEntropyMismatches");
    }

    private Meter[] pair(MetricRegistry r, String metric) {
        return new Meter[] {r.meter(name(metric)), r.meter(node.name(metric))};
    }

    private static void mark(Meter[] pair, long n) {
        pair[0].mark(n);
        pair[1].mark(n);
    }

    /** A remote write older than this node's own write of the key arrived: the local write won. */
    public void onConflictLocalWon() {
        mark(conflictsLocalWon, 1);
    }

    /** A local write was replaced in the cache by a newer remote write before it could be replicated. */
    public void onLocalWriteSuperseded() {
        mark(localWritesSuperseded, 1);
    }

    /** A remote write older than what the key (or the cache's last removeAll) already holds: discarded. */
    public void onStaleDiscarded() {
        mark(staleDiscarded, 1);
    }

    /** Keys anti-entropy or a resync changed here because a peer held a newer write. */
    public void onRepaired(long keys) {
        if (keys > 0) {
            mark(keysRepaired, keys);
        }
    }

    /** Anti-entropy compared this cache with one peer. */
    public void onAntiEntropyRound() {
        mark(antiEntropyRounds, 1);
    }

    /** Anti-entropy found {@code leaves} of this cache's digest different from a peer's. */
    public void onRangesDifferent(int leaves) {
        mark(antiEntropyMismatches, leaves);
    }

    /** Registers a gauge of this cache (its name is the metric's). */
    public void gauge(String metric, Gauge<?> gauge) {
        String n = name(metric);
        node.registry().remove(n);
        node.registry().register(n, gauge);
    }

    String name(String metric) {
        return ObjectNames.cacheMetric(node.cacheManagerName(), node.transport(), cacheName, metric);
    }

    public String cacheName() {
        return cacheName;
    }

    /** Records that the current thread, an ehrelay thread, served this cache. */
    public void servedByCurrentThread() {
        Thread t = Thread.currentThread();
        if (!servingThreads.contains(t)) {
            servingThreads.add(t);
        }
    }

    public int threadsPerRegion() {
        servingThreads.removeIf(t -> !t.isAlive());
        return servingThreads.size();
    }

    /** Counts an event into the queue depth; call before offering it, so depth never goes negative. */
    public void queueAdd(int bytes) {
        queueEvents.inc();
        queueBytes.inc(bytes);
        node.queueEvents.inc();
        node.queueBytes.inc(bytes);
    }

    /**
     * The queue accepted the event: counted on the writing thread with one add per meter, handed to the meters'
     * rates when the dispatcher takes the event ({@link #queueRemove(int, long)}) or a reader reads them.
     */
    public void onEnqueued() {
        enqueued.markLater();
        node.enqueued.markLater();
    }

    /** Counts an event out of the queue depth (taken by the dispatcher, refused, or discarded at shutdown). */
    public void queueRemove(int bytes) {
        queueRemove(1, bytes);
    }

    /** Counts {@code events} of {@code bytes} in all out of the queue depth at once (a dispatcher's batch). */
    public void queueRemove(int events, long bytes) {
        enqueued.flush();
        node.enqueued.flush();
        queueEvents.dec(events);
        queueBytes.dec(bytes);
        node.queueEvents.dec(events);
        node.queueBytes.dec(bytes);
    }

    /** An event the queue refused or discarded: counted, never silent. */
    public void onDropped() {
        dropped.mark();
        node.dropped.mark();
    }

    /** One event handed to one peer; {@code latencyNanos} from enqueue (or from the put, when synchronous). */
    public void onSent(int bytes, long latencyNanos) {
        onSent(1, bytes, latencyNanos);
    }

    /**
     * {@code events} of this cache, {@code bytes} in all, of one batch handed to one peer: counted at once, and
     * one latency recorded for them, that of the oldest ({@code oldestLatencyNanos}, from its enqueue). So
     * {@code sendLatency} holds one sample per batch and cache, the longest any of its events waited.
     */
    public void onSent(int events, long bytes, long oldestLatencyNanos) {
        // the latencies first: whoever sees the events counted in sent sees them in sendLatency too
        sendLatency.update(events, oldestLatencyNanos);
        node.sendLatency.update(events, oldestLatencyNanos);
        bytesSent.inc(bytes);
        sent.mark(events);
        node.sent.mark(events);
    }

    /** One event that could not be delivered to one peer. */
    public void onFailed() {
        onFailed(1);
    }

    /** {@code events} of one batch that could not be delivered to one peer. */
    public void onFailed(int events) {
        failed.mark(events);
        node.failed.mark(events);
    }

    /**
     * A received event that could not be applied to the local cache (the cache threw). Also counted in
     * {@code dropped}, as before {@code applyFailed} existed, until the next minor version.
     */
    public void onApplyFailed() {
        applyFailed.mark();
        node.applyFailed.mark();
        onDropped();
    }

    /**
     * An event that could not be encoded (its key or value cannot be serialized): it reaches no peer. Also
     * counted once in {@code failed}, as before {@code unencodable} existed, until the next minor version.
     */
    public void onUnencodable() {
        unencodable.mark();
        node.unencodable.mark();
        onFailed();
    }

    /**
     * A put, update or remove not replicated because its key is not {@code Serializable}, as stock Ehcache does
     * not: the element stays local and the peers are left alone.
     */
    public void onNotReplicated() {
        notReplicated.mark();
        node.notReplicated.mark();
    }

    /** An element a state transfer had to skip because it cannot be encoded: counted in {@code unencodable}. */
    public void onUnencodableInSnapshot() {
        unencodable.mark();
        node.unencodable.mark();
    }

    public void onSyncRoundTrip(long nanos) {
        syncRoundTrip.update(nanos, TimeUnit.NANOSECONDS);
        node.syncRoundTrip.update(nanos, TimeUnit.NANOSECONDS);
    }

    public void onReceived() {
        onReceived(1);
    }

    /** {@code events} of this cache received in one batch. */
    public void onReceived(int events) {
        received.mark(events);
        node.received.mark(events);
    }

    public void onApplied(long nanos) {
        onApplied(1, nanos);
    }

    /**
     * {@code events} of this cache applied from one batch, taking {@code nanos} in all: counted at once, and one
     * latency recorded for them, their mean. So {@code applyLatency} holds one sample per batch and cache.
     */
    public void onApplied(int events, long nanos) {
        // the latencies first: whoever sees the events counted in applied sees them in applyLatency too
        long mean = nanos / events;
        applyLatency.update(events, mean);
        node.applyLatency.update(events, mean);
        applied.mark(events);
        node.applied.mark(events);
    }

    /**
     * A received event this node could not apply (undecodable, or the cache refused it), whose key — or, when
     * not even the key decoded, whole cache — was invalidated locally instead, so it never serves what the event
     * changed.
     */
    public void onInvalidated() {
        invalidated.mark();
        node.invalidated.mark();
    }

    /** An event whose value the allow-list or a decoder limit rejected. */
    public void onRejected() {
        rejected.mark();
        node.rejected.mark();
    }

    public void onBootstrap(long nanos) {
        bootstraps.mark();
        node.bootstraps.mark();
        bootstrapDuration.update(nanos, TimeUnit.NANOSECONDS);
        node.bootstrapDuration.update(nanos, TimeUnit.NANOSECONDS);
    }

    public void onBootstrapFailure() {
        bootstrapFailures.mark();
        node.bootstrapFailures.mark();
    }

    // read accessors, for tests and the node's own logic

    /** The count of this cache's meter {@code metric}, 0 when there is none. */
    public long meterCount(String metric) {
        Meter m = node.registry().getMeters().get(name(metric));
        return m == null ? 0 : m.getCount();
    }

    public long sentCount() { return sent.getCount(); }
    public long droppedCount() { return dropped.getCount(); }
    public long failedCount() { return failed.getCount(); }
    public long appliedCount() { return applied.getCount(); }
    public long receivedCount() { return received.getCount(); }
    public long rejectedCount() { return rejected.getCount(); }
    public long applyFailedCount() { return applyFailed.getCount(); }
    public long unencodableCount() { return unencodable.getCount(); }
    public long notReplicatedCount() { return notReplicated.getCount(); }
    public long invalidatedCount() { return invalidated.getCount(); }
    public long queueEventCount() { return queueEvents.getCount(); }
    public long queueByteCount() { return queueBytes.getCount(); }
}
