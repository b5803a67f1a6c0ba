package io.ehrelay.internal.engine;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.ehrelay.config.SyncFailurePolicy;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.ReplicatorConfig;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import io.ehrelay.spi.TransportMetrics;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending side of a node: turns a cache change into an event, stamped by {@link Ordering} under its key's lock
 * once the cache is seen to still hold what the application wrote, and queues it for the dispatcher
 * (asynchronous) or sends it to every peer and waits (synchronous). The one place events are encoded, on the
 * writing thread (a fast-path put is written by the dispatcher instead); what cannot be encoded is counted in
 * {@code unencodable} and replicated as an invalidation of its key, and a key that is not {@code Serializable} is
 * not replicated ({@code notReplicated}), as with stock Ehcache. Where and why: docs/migration.md, "Where a value
 * is encoded, and why", and its table of what stock and ehrelay do. Thread-safe.
 */
final class Outbound {

    private static final Logger LOG = LoggerFactory.getLogger(Outbound.class);

    private final String cacheManagerName;
    private final NodeConfig config;
    private final ReplicationQueue queue;
    /** The peers that hold a cache (see {@link Membership}). */
    private final Function<String, List<Peer>> peers;
    private final Transport transport;
    private final ReplicationMetrics metrics;
    private final BooleanSupplier running;
    private final Convergence convergence;
    private final RateLimitedLog warn;
    private final Clock clock;
    private final SentClasses sentClasses;
    private final Ordering ordering;

    /** Puts that waited for room in the queue ({@code overflowPolicy=block}), and how long in all. */
    private final TransportMetrics.Count overflowWaits;
    private final AtomicLong waitedMicros = new AtomicLong();

    /** Caches whose non-{@code Serializable} keys were said in a WARN (once per cache). */
    private final Set<String> warnedNotSerializable = ConcurrentHashMap.newKeySet();

    Outbound(String cacheManagerName, NodeConfig config, ReplicationQueue queue,
             Function<String, List<Peer>> peers,
             Transport transport, ReplicationMetrics metrics, BooleanSupplier running, Convergence convergence,
             RateLimitedLog warn, Clock clock, SentClasses sentClasses, Ordering ordering) {
        this.ordering = ordering;
        this.cacheManagerName = cacheManagerName;
        this.config = config;
        this.queue = queue;
        this.peers = peers;
        this.transport = transport;
        this.metrics = metrics;
        this.running = running;
        this.convergence = convergence;
        this.warn = warn;
        this.clock = clock;
        this.sentClasses = sentClasses;
        this.overflowWaits = metrics.count(MetricNames.OVERFLOW_WAITS);
        metrics.gauge("overflowWaitMillis", () -> waitedMicros.get() / 1000);
        queue.onWait(this::waitedForRoom);
    }

    /**
     * Replicates a put or update with its value ({@code replicate*ViaCopy=true}), stamped by {@link Ordering};
     * nothing is sent when a remote write replaced the element before this node was told.
     *
     * <p>The whole of an asynchronous put, to its place in the queue, is written out here (for other events,
     * {@link #offer} does the queue's part): so this method is over HotSpot's {@code FreqInlineSize} (325 bytes of
     * bytecode) and is compiled once, on its own. When Ehcache's listener loop and each level below it inlined it, the JIT compiled
     * the put path again at every level while the replay's steps ran (E2: about a second of C2 time on the
     * writer; docs/benchmarks.md). {@code OutboundCompileTest} keeps it over the limit.
     */
    void put(CacheBinding binding, Ehcache cache, Element element, ReplicatorConfig rc) {
        if (keyNotSerializable(binding, element.getObjectKey())) {
            return;
        }
        if (rc.asynchronous()) {
            int size = EventCodec.putSize(binding.nameUtf8, element);
            if (size >= 0) {
                int keyHash;
                try {
                    keyHash = EventCodec.hashOf(element.getObjectKey());
                } catch (IOException e) {
                    throw new IllegalStateException("fast-path types always encode", e);
                }
                // the value is hashed by the dispatcher as it writes the event, not on the application's thread
                Version v = ordering.localPendingPut(binding, cache, element.getObjectKey(), element, keyHash);
                if (v == null) {
                    return;
                }
                if (!v.pending()) {
                    invalidateInstead(binding, element.getObjectKey(), v, rc);
                    return;
                }
                ReplicationQueue.Entry entry = new ReplicationQueue.Entry(binding.metrics, binding.nameUtf8, element,
                        size, clock.nanoTime(), v, binding.versions);
                binding.metrics.queueAdd(size);
                boolean started = running.getAsBoolean();
                if (started && enqueue(binding, entry)) {
                    binding.metrics.onEnqueued();
                } else {
                    refused(binding, entry, started);
                }
                return;
            }
        }
        byte[] event;
        int[] hashes = new int[2];
        try {
            event = EventCodec.encodePut(binding.cacheName, element, sentClasses.forCache(binding.cacheName), hashes);
        } catch (IOException | RuntimeException | Error e) {
            unencodable(binding, element.getObjectKey(), e);
            // the peers must not keep serving what this put replaced: they drop the key instead
            keyEvent(binding, cache, Op.INVALIDATE, element, element.getObjectKey(), rc);
            return;
        }
        Version v = ordering.localPut(binding, cache, element.getObjectKey(), element, hashes[0], hashes[1]);
        if (v == null) {
            return;
        }
        if (v.valueHash != hashes[1]) {
            invalidateInstead(binding, element.getObjectKey(), v, rc);
            return;
        }
        EventCodec.stamp(event, v.stamp, v.origin, hashes[1]);
        route(binding, event, rc);
    }

    /**
     * The cache no longer held a put's key when it was stamped (removed or evicted meanwhile): the peers drop the
     * key too, under the put's stamp, rather than hold a value this node does not.
     */
    private void invalidateInstead(CacheBinding binding, Object key, Version v, ReplicatorConfig rc) {
        byte[] event;
        try {
            event = EventCodec.encodeKey(Op.INVALIDATE, binding.cacheName, key, null, new int[2]);
        } catch (IOException | RuntimeException | Error e) {
            unencodable(binding, key, e);
            return;
        }
        EventCodec.stamp(event, v.stamp, v.origin, 0);
        route(binding, event, rc);
    }

    /**
     * Replicates a key-only event, stamped: a remove, or an invalidation ({@code replicate*ViaCopy=false}, or a
     * value that cannot be encoded) of the put of {@code element}.
     */
    void keyEvent(CacheBinding binding, Ehcache cache, Op op, Element element, Object key, ReplicatorConfig rc) {
        if (keyNotSerializable(binding, key)) {
            return;
        }
        byte[] event;
        int[] hashes = new int[2];
        try {
            event = EventCodec.encodeKey(op, binding.cacheName, key, sentClasses.forCache(binding.cacheName), hashes);
        } catch (IOException | RuntimeException | Error e) {
            // a key no peer can be told about (nor was before: its puts could not be encoded either)
            unencodable(binding, key, e);
            return;
        }
        Version v = op == Op.REMOVE ? ordering.localRemove(binding, cache, key, hashes[0])
                : ordering.localPut(binding, cache, key, element, hashes[0], 0);
        if (v == null) {
            return;
        }
        EventCodec.stamp(event, v.stamp, v.origin, 0);
        route(binding, event, rc);
    }

    void removeAll(CacheBinding binding, Ehcache cache, ReplicatorConfig rc) {
        Version v = ordering.localClear(binding, cache);
        byte[] event = EventCodec.encodeStampedRemoveAll(binding.cacheName);
        EventCodec.stamp(event, v.stamp, v.origin, 0);
        route(binding, event, rc);
    }

    private void route(CacheBinding binding, byte[] event, ReplicatorConfig rc) {
        if (rc.asynchronous()) {
            offer(binding, new ReplicationQueue.Entry(binding.metrics, event, clock.nanoTime()));
        } else {
            sendSynchronously(binding, event, rc);
        }
    }

    /**
     * Whether {@code key} is not {@code Serializable}: then its event is not replicated, as stock Ehcache's
     * replicators skip it ("is not Serializable and cannot be replicated"), counted in {@code notReplicated}, and
     * said in one WARN per cache. A {@code null} key is left to the encoder.
     */
    private boolean keyNotSerializable(CacheBinding binding, Object key) {
        if (key == null || key instanceof Serializable) {
            return false;
        }
        binding.metrics.onNotReplicated();
        if (warnedNotSerializable.add(binding.cacheName)) {
            LOG.warn("ehrelay: cache '{}' of CacheManager {} has a key of class {}, which is not Serializable: its "
                    + "puts, updates and removes are not replicated and the element stays local to this node, as "
                    + "with stock Ehcache; the peers are left alone (counted in notReplicated; said once per cache)",
                    binding.cacheName, cacheManagerName, key.getClass().getName());
        }
        return true;
    }

    private void unencodable(CacheBinding binding, Object key, Throwable e) {
        binding.metrics.onUnencodable();
        warn.warn("encode:" + binding.cacheName, "ehrelay: key {} of cache {} cannot be replicated (counted in "
                + "unencodable): {}", key, binding.cacheName, e.toString());
    }

    /** Queues an event; a refused one is counted in {@code dropped}, logged, and owed to every peer. */
    private void offer(CacheBinding binding, ReplicationQueue.Entry entry) {
        binding.metrics.queueAdd(entry.size);
        boolean started = running.getAsBoolean();
        if (started && enqueue(binding, entry)) {
            binding.metrics.onEnqueued();
        } else {
            refused(binding, entry, started);
        }
    }

    /** Whether the queue took the event; an interrupted wait for room did not, and the thread stays interrupted. */
    private boolean enqueue(CacheBinding binding, ReplicationQueue.Entry entry) {
        try {
            return queue.offer(binding.lane, entry);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The queue did not take {@code entry} ({@code started}: replication runs, so the queue was full). */
    private void refused(CacheBinding binding, ReplicationQueue.Entry entry, boolean started) {
        CacheMetrics m = binding.metrics;
        m.queueRemove(entry.size);
        m.onDropped();
        entry.settleUnsent(); // the peers are owed this node's state: a pending version is never served
        if (!started) {
            warn.warn("notstarted", "ehrelay: replication of CacheManager {} is not running; event for cache {} "
                    + "dropped (counted in dropped)", cacheManagerName, binding.cacheName);
            return;
        }
        // the peers miss this event: the batch of the lane's next event tells them to resynchronise from this
        // node (the queue marks it)
        convergence.oweAll(peers.apply(binding.cacheName));
        warn.warn("overflow", "ehrelay: replication queue of CacheManager {} is full (queueMaxEvents={}, "
                + "queueMaxBytes={}, overflowPolicy={}); event for cache {} dropped (counted in dropped). "
                + "Raise the bounds, or check the peers' health.", cacheManagerName, config.queueMaxEvents(),
                config.queueMaxBytes(), config.overflowPolicy(), binding.cacheName);
    }

    /**
     * The writing thread waited {@code nanos} for room in the full queue ({@code overflowPolicy=block}): counted
     * in {@code overflowWaits} and {@code overflowWaitMillis}, and said in a WARN at most every 10 s, so that an
     * application whose threads wait hears of it.
     */
    private void waitedForRoom(long nanos) {
        overflowWaits.mark();
        long micros = waitedMicros.addAndGet(TimeUnit.NANOSECONDS.toMicros(nanos));
        warn.warn("overflowwait", "ehrelay: replication queue of CacheManager {} is full (queueMaxEvents={}, "
                + "queueMaxBytes={}): a writing thread waited {} ms for room (overflowPolicy=block, at most "
                + "overflowBlockMillis={} ms; {} waits, {} ms in all so far: overflowWaits, overflowWaitMillis). "
                + "The peers take events slower than this node writes them.", cacheManagerName,
                config.queueMaxEvents(), config.queueMaxBytes(),
                TimeUnit.NANOSECONDS.toMillis(nanos), config.overflowBlockMillis(),
                overflowWaits.value(), micros / 1000);
    }

    /**
     * Sends one event to every peer and waits until each applied it, up to the replicator's timeout. Failures
     * are counted; with {@link SyncFailurePolicy#THROW} they are thrown as a {@link CacheException} naming
     * each peer and its reason.
     */
    private void sendSynchronously(CacheBinding binding, byte[] event, ReplicatorConfig rc) {
        List<Peer> targets = peers.apply(binding.cacheName);
        if (targets.isEmpty() || !running.getAsBoolean()) {
            return;
        }
        long t0 = clock.nanoTime();
        long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(rc.syncTimeoutMillis());
        Batch batch = new Batch(EventCodec.singletonBatch(event), 1).withDeadline(deadline);
        SendRound round = SendRound.start(transport, targets, batch, true);
        List<String> failures = new ArrayList<>(0);
        CacheMetrics m = binding.metrics;
        try {
            round.settle(() -> TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanoTime()), (peer, failure) -> {
                long now = clock.nanoTime();
                if (failure == null && now - deadline > 0) {
                    // sent on this thread by a transport that cannot bound the call: acknowledged, but late
                    failure = new TimeoutException("acknowledged after "
                            + TimeUnit.NANOSECONDS.toMillis(now - t0) + " ms");
                }
                if (failure == null) {
                    m.onSent(event.length, now - t0);
                    metrics.markBytesSent(batch.length());
                } else {
                    m.onFailed();
                    failures.add(peer + " (" + SendRound.describe(failure) + ")");
                }
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failures.add("interrupted while waiting for " + targets);
        }
        m.onSyncRoundTrip(clock.nanoTime() - t0);
        if (!failures.isEmpty()) {
            String message = "ehrelay: synchronous replication for cache " + binding.cacheName + " of CacheManager "
                    + cacheManagerName + " not acknowledged within syncTimeoutMillis=" + rc.syncTimeoutMillis()
                    + " by " + failures;
            if (rc.syncFailurePolicy() == SyncFailurePolicy.THROW) {
                throw new CacheException(message);
            }
            warn.warn("sync:" + binding.cacheName, message);
        }
    }
}
