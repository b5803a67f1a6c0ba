package io.ehrelay.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.Ehcache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resyncs at once when the receive path reports a gap (batches of a peer that never arrived, or a batch flagged
 * "the sender lost events"): every replicated cache's content is pulled from the peer through
 * {@link StateTransfer} and merged key by key by {@link Ordering}; when this node owes the peer too, it marks its
 * lanes lost so that the peer pulls from it. On the node's background thread, at most one queued per peer;
 * counted in {@code resyncs} / {@code resyncFailures}, {@code gaps}. See docs/reliability.md, "Missed events".
 * Thread-safe.
 */
final class Convergence {

    private static final Logger LOG = LoggerFactory.getLogger(Convergence.class);

    private final String cacheManagerName;
    private final Transport transport;
    private final Supplier<List<Peer>> peers;
    private final ReplicationMetrics metrics;
    private final CacheBindings caches;
    private final BooleanSupplier running;
    /** Marks every dispatcher lane lost: each peer that receives the next batches resynchronises from this node. */
    private final Runnable markLostAll;
    private final StateTransfer state;
    /** A resync skips the caches the peer said it does not hold. */
    private final Membership membership;

    /** Peers that may be missing events of this node (a send to them failed, or this node dropped events). */
    private final Set<String> owes = ConcurrentHashMap.newKeySet();
    /** Peers a resync from is queued or running. */
    private final Set<String> resyncPending = ConcurrentHashMap.newKeySet();

    Convergence(String cacheManagerName, Transport transport, Supplier<List<Peer>> peers, ReplicationMetrics metrics,
                CacheBindings caches, BooleanSupplier running, Runnable markLostAll, Membership membership,
                StateTransfer state) {
        this.state = state;
        this.membership = membership;
        this.cacheManagerName = cacheManagerName;
        this.transport = transport;
        this.peers = peers;
        this.metrics = metrics;
        this.caches = caches;
        this.running = running;
        this.markLostAll = markLostAll;
        metrics.meter(MetricNames.RESYNCS);
        metrics.meter(MetricNames.RESYNC_FAILURES);
        metrics.meter(MetricNames.GAPS);
    }

    /** A batch could not be delivered to {@code peer}: it may miss events of this node. */
    void owe(Peer peer) {
        owes.add(peer.endpoint());
    }

    /** Events were dropped before sending: every current peer misses them. */
    void oweAll(List<Peer> current) {
        for (Peer p : current) {
            owes.add(p.endpoint());
        }
    }

    boolean owes(String endpoint) {
        return owes.contains(endpoint);
    }

    /**
     * This node missed events of {@code fromPeer}: batches that never arrived ({@code missedBatches}) or events
     * the peer itself lost ({@code peerLost}). Applies the policy described on the class.
     */
    void behind(String fromPeer, long missedBatches, boolean peerLost) {
        if (!running.getAsBoolean()) {
            return;
        }
        String peer = transport.normalizePeer(transport.peerOf(fromPeer));
        metrics.meter(MetricNames.GAPS).mark();
        boolean mutual = owes.remove(peer);
        if (!mutual && !owes.isEmpty() && !known(peer)) {
            // this node reaches the peer under another name (a proxy, NAT): whether it owes that peer cannot be
            // told apart, so any debt counts
            mutual = true;
            owes.clear();
        }
        if (mutual) {
            // the peer misses this node's events too: its next batch from here tells it to pull from this node
            markLostAll.run();
        }
        LOG.warn("ehrelay: CacheManager {} missed events of {} ({} batches missed{}{}); resynchronising from it",
                cacheManagerName, peer, missedBatches, peerLost ? ", it lost events" : "",
                mutual ? ", and it missed this node's: it resynchronises from this node too" : "");
        resyncFrom(peer);
    }

    private boolean known(String endpoint) {
        for (Peer p : peers.get()) {
            if (p.endpoint().equals(endpoint)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Makes every replicated cache of this node equal to {@code peerEndpoint}'s (see the class comment).
     * Asynchronous, on the node's background thread, at most one queued per peer.
     */
    void resyncFrom(String peerEndpoint) {
        if (!resyncPending.add(peerEndpoint)) {
            return;
        }
        StateTransfer st = state;
        st.inBackground(() -> {
            resyncPending.remove(peerEndpoint);
            Peer peer = new Peer(peerEndpoint);
            List<String> failed = new ArrayList<>();
            long total = 0;
            for (String name : caches.replicatedCaches()) {
                Ehcache cache = caches.resolve(name);
                if (cache == null || !membership.has(peerEndpoint, name)) {
                    continue;
                }
                AtomicLong loaded = new AtomicLong();
                Throwable failure;
                try {
                    failure = st.fetch(peer, cache, 1 << 20, 600_000, loaded);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (failure != null) {
                    failed.add(name + " (" + SendRound.describe(failure) + ")");
                }
                total += loaded.get();
            }
            if (failed.isEmpty()) {
                metrics.meter(MetricNames.RESYNCS).mark();
                LOG.info("ehrelay: CacheManager {} resynchronised from {}: {} entries compared, the newer write of "
                        + "each key kept", cacheManagerName, peerEndpoint, total);
            } else {
                metrics.meter(MetricNames.RESYNC_FAILURES).mark();
                LOG.warn("ehrelay: CacheManager {} could not resynchronise from {}: {}", cacheManagerName,
                        peerEndpoint, failed);
            }
        });
    }
}
