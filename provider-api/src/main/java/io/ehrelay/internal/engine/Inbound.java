package io.ehrelay.internal.engine;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.DecodedBatch;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.internal.codec.Rejection;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import net.sf.ehcache.Ehcache;

/**
 * The receiving side of a node, what transports call when bytes arrive: decodes a batch (every value checked
 * against the allow-list and the limits), skips a batch that arrived before (told by the {@link StreamSequencer}),
 * applies each event to its cache without notifying the cache's replicators (nothing echoes back), and reports
 * gaps to {@link Convergence}. An event it cannot apply — undecodable, or refused by the cache — is replaced by a
 * local invalidation of what it would have changed ({@link Invalidations}): this node may then miss, but never
 * serves data another node changed. State requests are answered by {@link StateTransfer}. Thread-safe; a
 * transport calls it from one thread at a time per connection, which keeps each cache's order.
 */
final class Inbound implements InboundHandler {

    private final String cacheManagerName;
    private final CacheBindings caches;
    private final ReplicationMetrics metrics;
    private final CodecLimits limits;
    private final Convergence convergence;
    private final StreamSequencer sequencer = new StreamSequencer();
    private final RateLimitedLog warn;
    private final Clock clock;
    private final Invalidations invalidations;
    private final Ordering ordering;
    private final StateTransfer state;
    private final AntiEntropyServer antiEntropyServer;
    private final PeerStats peerStats;
    private final Map<String, String> endpoints = new ConcurrentHashMap<>();
    private final Membership membership;
    /** The endpoint of the node a {@code fromPeer} names ({@code null}: none), under which Membership knows it. */
    private final Function<String, String> endpointOf;

    Inbound(String cacheManagerName, CacheBindings caches, ReplicationMetrics metrics, CodecLimits limits,
            Convergence convergence, RateLimitedLog warn, Clock clock, Ordering ordering, Membership membership,
            Function<String, String> endpointOf, Invalidations invalidations, StateTransfer state,
            AntiEntropyServer antiEntropyServer, PeerStats peerStats) {
        this.membership = membership;
        this.endpointOf = endpointOf;
        this.ordering = ordering;
        this.cacheManagerName = cacheManagerName;
        this.caches = caches;
        this.metrics = metrics;
        this.limits = limits;
        this.convergence = convergence;
        this.warn = warn;
        this.clock = clock;
        this.invalidations = invalidations;
        this.state = state;
        this.antiEntropyServer = antiEntropyServer;
        this.peerStats = peerStats;
        metrics.meter(MetricNames.DUPLICATE_BATCHES);
    }

    @Override
    public void onEvents(String fromPeer, ByteBuffer batch) throws MalformedFrameException {
        metrics.markBytesReceived(batch.remaining());
        DecodedBatch decoded;
        try {
            decoded = EventDecoder.decodeBatch(batch, limits);
        } catch (MalformedFrameException e) {
            metrics.markMalformedFrame();
            warn.warn("malformed:" + fromPeer, "ehrelay: rejected a damaged batch from {} (counted in "
                    + "malformedFrames): {}", fromPeer, e.getMessage());
            throw e;
        }
        long stream = decoded.stream();
        peerStats.contact(endpointCached(fromPeer));
        if (decoded.isMembership()) {
            String endpoint = endpointOf.apply(fromPeer);
            if (endpoint != null) {
                membership.announced(endpoint, stream, decoded.seq(), decoded.members(), decoded.removed());
            }
            return;
        }
        long missed = sequencer.accept(stream, decoded.seq());
        if (missed == StreamSequencer.DUPLICATE) {
            // a batch sent again (a retry after a reset whose first attempt had arrived): applying it again
            // could undo later events
            metrics.meter(MetricNames.DUPLICATE_BATCHES).mark();
            warn.warn("duplicate:" + fromPeer, "ehrelay: batch {} of {} arrived again (the last applied is {}); "
                    + "skipped (counted in duplicateBatches)", decoded.seq(), fromPeer, sequencer.last(stream));
            return;
        }
        Tally tally = new Tally(decoded.rejections());
        try {
            for (ReplicationEvent ev : decoded.events()) {
                apply(fromPeer, ev, stream, decoded.seq(), decoded.rejectionOf(ev), tally);
            }
        } finally {
            tally.record();
        }
        boolean lost = stream != 0 && (decoded.flags() & EventCodec.FLAG_LOST) != 0;
        if (missed > 0 || lost) {
            convergence.behind(fromPeer, missed, lost);
        }
    }

    @Override
    public void onEvent(String fromPeer, ReplicationEvent event) {
        applyOne(fromPeer, event, null);
    }

    @Override
    public void onUndecodable(String fromPeer, String cacheName, String rejectedClass, String why) {
        // the key is unknown: nothing is changed here (no whole-cache clear); counted and logged
        ReplicationEvent none = ReplicationEvent.ofKey(Op.INVALIDATE, cacheName, null);
        applyOne(fromPeer, none, new Rejection(cacheName, null, none,
                new RejectedClassException(rejectedClass, why)));
    }

    @Override
    public Ehcache liveCache(String cacheName) {
        return caches.resolve(cacheName);
    }

    @Override
    public StateCursor openState(String cacheName) {
        if (AntiEntropyServer.isRequest(cacheName)) {
            return antiEntropyServer.open(cacheName);
        }
        return state.open(cacheName);
    }

    /** The endpoint of a transport's sender name, remembered (at most a few thousand names). */
    private String endpointCached(String fromPeer) {
        String e = endpoints.get(fromPeer);
        if (e == null) {
            e = endpointOf.apply(fromPeer);
            if (e != null) {
                if (endpoints.size() > 4096) {
                    endpoints.clear();
                }
                endpoints.put(fromPeer, e);
            }
        }
        return e;
    }

    /** An event that arrived alone, counted at once. */
    private void applyOne(String fromPeer, ReplicationEvent ev, Rejection rejection) {
        Tally tally = new Tally(rejection == null ? Collections.<Rejection>emptyList()
                : Collections.singletonList(rejection));
        try {
            apply(fromPeer, ev, 0, 0, rejection, tally);
        } finally {
            tally.record();
        }
    }

    /**
     * What a batch's consecutive events of one cache add to its metrics ({@code received}, {@code applied} and
     * the time applying took), recorded once, when the batch moves on to another cache or ends: per-event meter
     * ticks and latency samples cost the apply thread more than small events' own work.
     */
    private static final class Tally {
        private final List<Rejection> rejections;
        /** per cache, the keys of this node whose bytes hash like a key of the batch it could not read */
        private Map<String, Map<Integer, List<Object>>> unreadKeys;
        private CacheMetrics cache;
        private int received;
        private int applied;
        private long applyNanos;

        Tally(List<Rejection> rejections) {
            this.rejections = rejections;
        }

        /**
         * The keys of {@code binding}'s cache whose encoded bytes hash to {@code keyHash}: the first time the batch
         * asks for a cache, one scan of its version table finds those of every key of the batch (in that cache)
         * that this node could not read, so that a batch of them costs one scan, not one per event.
         */
        List<Object> keysWithHash(CacheBinding binding, int keyHash) {
            if (unreadKeys == null) {
                unreadKeys = new HashMap<>(2);
            }
            Map<Integer, List<Object>> byHash = unreadKeys.get(binding.cacheName);
            if (byHash == null) {
                int[] hashes = new int[rejections.size() + 1];
                int n = 0;
                hashes[n++] = keyHash;
                for (Rejection r : rejections) {
                    ReplicationEvent instead = r.invalidation();
                    if (instead.key() == null && instead.keyHash() != 0 && r.cacheName().equals(binding.cacheName)) {
                        hashes[n++] = instead.keyHash();
                    }
                }
                hashes = Arrays.copyOf(hashes, n);
                Arrays.sort(hashes);
                byHash = binding.versions.keysWithHashes(hashes);
                unreadKeys.put(binding.cacheName, byHash);
            }
            List<Object> keys = byHash.get(keyHash);
            return keys == null ? Collections.emptyList() : keys;
        }

        /** The metrics of {@code m}'s cache from now on; those of the previous cache are recorded. */
        void switchTo(CacheMetrics m) {
            if (m != cache) {
                record();
                cache = m;
                m.servedByCurrentThread();
            }
        }

        void record() {
            if (cache != null) {
                if (received > 0) {
                    cache.onReceived(received);
                }
                if (applied > 0) {
                    cache.onApplied(applied, applyNanos);
                }
            }
            cache = null;
            received = 0;
            applied = 0;
            applyNanos = 0;
        }
    }

    /**
     * @param stream the batch's stream and number (0: unsequenced), which tell a resync how new the event is
     * @param rejection not null when {@code ev} is the local invalidation that replaces an undecodable event
     * @param tally where the event's counts go
     */
    private void apply(String fromPeer, ReplicationEvent ev, long stream, long seq, Rejection rejection,
                       Tally tally) {
        Ehcache cache = caches.resolve(ev.cacheName());
        if (rejection != null) {
            invalidations.undecodable(fromPeer, rejection, cache != null);
        }
        if (cache == null) {
            metrics.markUnknownCache();
            // one key per sender, not per cache: a peer with many caches this node lacks (or a hostile one inventing
            // names) makes one line per interval, with the count of the others, and no bookkeeping per name
            warn.warn("unknown:" + fromPeer, "ehrelay: event from {} for cache '{}', which CacheManager {} "
                    + "does not have; dropped (counted in unknownCache)", fromPeer, ev.cacheName(), cacheManagerName);
            String endpoint = endpointOf.apply(fromPeer);
            if (endpoint != null) {
                membership.sentUnknownCache(endpoint); // it may not know: tell it which caches this node has
            }
            return;
        }
        CacheMetrics m = metrics.cache(ev.cacheName());
        tally.switchTo(m);
        tally.received++;
        CacheBinding binding = caches.bind(ev.cacheName());
        if (rejection != null && ev.key() == null) {
            // not even the key decoded: the keys this node wrote whose bytes hash alike are invalidated (the key
            // itself, unless two keys collide); a key this node never wrote it cannot hold
            if (ev.keyHash() != 0) {
                for (Object key : tally.keysWithHash(binding, ev.keyHash())) {
                    applyNow(fromPeer, binding, cache, m, ReplicationEvent.ofKey(Op.INVALIDATE,
                            ev.cacheName(), key).stamped(ev.stamp(), ev.origin(), ev.valueHash(), ev.keyHash()),
                            false, tally);
                    m.onInvalidated();
                }
            }
            return;
        }
        boolean measured = rejection == null; // an invalidation is counted in invalidated, not in applied
        applyNow(fromPeer, binding, cache, m, ev, measured, tally);
    }

    private void applyNow(String fromPeer, CacheBinding binding, Ehcache cache, CacheMetrics m, ReplicationEvent ev,
                          boolean measured, Tally tally) {
        long t0 = clock.nanoTime();
        VersionTable.Outcome outcome;
        try {
            outcome = ordering.apply(binding, cache, ev);
        } catch (RuntimeException e) {
            invalidations.applyFailed(fromPeer, cache, m, ev, e);
            return;
        }
        // a write older than what the key holds is counted by Ordering (conflictsLocalWon, staleDiscarded)
        if (measured && outcome == VersionTable.Outcome.APPLIED) {
            tally.applied++;
            tally.applyNanos += clock.nanoTime() - t0;
        }
    }
}
