package io.ehrelay.internal.engine;

import java.nio.ByteBuffer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import net.sf.ehcache.Ehcache;

/**
 * The receiving side of a node, what transports call when bytes arrive: decodes a batch (every value checked
 * against the allow-list and the limits), skips a batch that arrived before (told by the {@link StreamSequencer}),
 * applies each event to its cache without notifying the cache's replicators (nothing echoes back), and reports
 * gaps to {@link Convergence}. State requests are answered by {@link StateTransfer}. Thread-safe; a transport calls
 * it from one thread at a time per connection, which keeps each cache's order.
 */
final class Inbound implements InboundHandler {

    private static final Logger LOG = LoggerFactory.getLogger(Inbound.class);

    private final String cacheManagerName;
    private final CacheBindings caches;
    private final ReplicationMetrics metrics;
    private final CodecLimits limits;
    private final Convergence convergence;
    private final StreamSequencer sequencer = new StreamSequencer();
    private final RateLimitedLog warn;
    private final Clock clock;
    private volatile StateTransfer state;

    Inbound(String cacheManagerName, CacheBindings caches, ReplicationMetrics metrics, CodecLimits limits,
            Convergence convergence, RateLimitedLog warn, Clock clock) {
        this.cacheManagerName = cacheManagerName;
        this.caches = caches;
        this.metrics = metrics;
        this.limits = limits;
        this.convergence = convergence;
        this.warn = warn;
        this.clock = clock;
        metrics.meter("duplicateBatches");
    }

    void setStateTransfer(StateTransfer stateTransfer) {
        this.state = stateTransfer;
    }

    @Override
    public void onEvents(String fromPeer, ByteBuffer batch) throws MalformedFrameException {
        metrics.markBytesReceived(batch.remaining());
        EventCodec.DecodedBatch decoded;
        try {
            decoded = EventCodec.decodeBatch(batch, limits);
        } catch (MalformedFrameException e) {
            metrics.markMalformedFrame();
            warn.warn("malformed:" + fromPeer, "ehrelay: rejected a damaged batch from {} (counted in "
                    + "malformedFrames): {}", fromPeer, e.getMessage());
            throw e;
        }
        countRejections(fromPeer, decoded);
        long stream = decoded.stream();
        long missed = sequencer.accept(stream, decoded.seq());
        if (missed == StreamSequencer.DUPLICATE) {
            // a batch sent again (a retry after a reset whose first attempt had arrived): applying it again
            // could undo later events
            metrics.meter("duplicateBatches").mark();
            warn.warn("duplicate:" + fromPeer, "ehrelay: batch {} of {} arrived again (the last applied is {}); "
                    + "skipped (counted in duplicateBatches)", decoded.seq(), fromPeer, sequencer.last(stream));
            return;
        }
        for (ReplicationEvent ev : decoded.events()) {
            apply(fromPeer, ev, stream, decoded.seq());
        }
        boolean lost = stream != 0 && (decoded.flags() & EventCodec.FLAG_LOST) != 0;
        if (missed > 0 || lost) {
            convergence.behind(fromPeer, missed, lost);
        }
    }

    @Override
    public void onEvent(String fromPeer, ReplicationEvent event) {
        apply(fromPeer, event, 0, 0);
    }

    @Override
    public Ehcache liveCache(String cacheName) {
        return caches.resolve(cacheName);
    }

    @Override
    public StateCursor openState(String cacheName) {
        return state.open(cacheName);
    }

    /** Counts and logs the values a decoded batch had to reject. */
    void countRejections(String fromPeer, EventCodec.DecodedBatch decoded) {
        for (EventCodec.Rejection r : decoded.rejections()) {
            Ehcache cache = r.cacheName() == null ? null : caches.resolve(r.cacheName());
            if (cache != null) {
                metrics.cache(r.cacheName()).onRejected();
            } else {
                metrics.markRejected();
            }
            warn.warn("rejected:" + r.reason().className(),
                    "ehrelay: rejected a replicated value from {} for cache {} (counted in rejected): {}", fromPeer,
                    r.cacheName(), r.reason().getMessage());
        }
    }

    /** @param stream the batch's stream and number (0: unsequenced), which tell a resync how new the event is */
    private void apply(String fromPeer, ReplicationEvent ev, long stream, long seq) {
        Ehcache cache = caches.resolve(ev.cacheName());
        if (cache == null) {
            metrics.markUnknownCache();
            warn.warn("unknown:" + ev.cacheName(), "ehrelay: event from {} for cache '{}', which CacheManager {} "
                    + "does not have; dropped (counted in unknownCache)", fromPeer, ev.cacheName(), cacheManagerName);
            return;
        }
        CacheMetrics m = metrics.cache(ev.cacheName());
        m.onReceived();
        m.servedByCurrentThread();
        ResyncTrack track = convergence.track(ev.cacheName());
        if (track != null) {
            synchronized (track) { // a live event and the snapshot's element for the same key never interleave
                track.touch(ev, stream, seq);
                applyNow(fromPeer, cache, m, ev);
            }
            return;
        }
        applyNow(fromPeer, cache, m, ev);
    }

    private void applyNow(String fromPeer, Ehcache cache, CacheMetrics m, ReplicationEvent ev) {
        long t0 = clock.nanoTime();
        try {
            switch (ev.op()) {
                case PUT:
                    cache.put(ev.toElement(), true);
                    break;
                case INVALIDATE:
                case REMOVE:
                    cache.remove(ev.key(), true);
                    break;
                case REMOVE_ALL:
                    cache.removeAll(true);
                    break;
                default:
                    throw new IllegalStateException("unhandled " + ev.op());
            }
        } catch (RuntimeException e) {
            m.onApplyFailed();
            warn.warn("apply:" + ev.cacheName(), "ehrelay: could not apply {} from {} (counted in applyFailed): {}",
                    ev, fromPeer, e.toString());
            LOG.debug("apply failure", e);
            return;
        }
        m.onApplied(clock.nanoTime() - t0);
    }
}
