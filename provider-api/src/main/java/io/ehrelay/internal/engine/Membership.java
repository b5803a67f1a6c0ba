package io.ehrelay.internal.engine;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which caches each peer replicates and which it removed, as the peers announce them ({@link Announcements} is
 * this node's side): a node is not sent the events of a cache it removed, {@code listRemoteCachePeers(cache)}
 * lists only the peers that hold {@code cache}, and a peer that adds again a cache whose events were left out for
 * it has its copy cleared. A peer this node knows nothing of is taken to hold every cache. The rules and why:
 * docs/migration.md, "Per-cache membership". Thread-safe.
 */
final class Membership {

    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);
    static final long REANNOUNCE_NANOS = TimeUnit.SECONDS.toNanos(2);

    /**
     * What one peer announced: its run, the announcement's number, its caches ({@code null}: every one) and the
     * caches it removed (in that run, not added again).
     */
    private static final class Announced {
        final long run;
        final long version;
        final Set<String> caches;
        final Set<String> removed;

        Announced(long run, long version, Set<String> caches, Set<String> removed) {
            this.run = run;
            this.version = version;
            this.caches = caches;
            this.removed = removed;
        }

        /** The peer holds no cache (it is leaving, or replicates none): a failed send to it changes nothing. */
        boolean holdsNothing() {
            return caches != null && caches.isEmpty();
        }
    }

    private final String cacheManagerName;
    private final Transport transport;
    private final Clock clock;

    private final Map<String, Announced> announced = new ConcurrentHashMap<>();
    /** Per peer: caches whose events were left out for it (it lacked them): cleared on it if it adds them (guarded by this). */
    private final Map<String, Set<String>> leftOut = new ConcurrentHashMap<>();
    /** The run each peer last announced from (kept when its announcement is forgotten). */
    private final Map<String, Long> runs = new ConcurrentHashMap<>();

    private final Announcements announcements;

    /** @param localCaches the caches this node replicates now (live or bootstrapping ones) */
    Membership(String cacheManagerName, Transport transport, Supplier<Collection<String>> localCaches, Clock clock) {
        this.cacheManagerName = cacheManagerName;
        this.transport = transport;
        this.clock = clock;
        this.announcements = new Announcements(transport, localCaches, clock, this::saidItHoldsNothing);
    }

    /** Whether {@code endpoint}'s last announcement named no cache (it left, or replicates none). */
    private boolean saidItHoldsNothing(String endpoint) {
        Announced a = announced.get(endpoint);
        return a != null && a.holdsNothing();
    }

    /** Whether {@code endpoint} holds {@code cacheName} as far as this node knows (yes, unless it said no). */
    boolean has(String endpoint, String cacheName) {
        Announced a = announced.get(endpoint);
        return a == null || a.caches == null || a.caches.contains(cacheName);
    }

    /** Whether {@code endpoint} removed {@code cacheName} (and has not added it again): it is not sent its events. */
    boolean removedBy(String endpoint, String cacheName) {
        Announced a = announced.get(endpoint);
        return a != null && a.removed.contains(cacheName);
    }

    /**
     * Whether {@code endpoint} removed any cache (in its run, not added again): the dispatcher's one lookup per
     * peer and batch before it asks {@link #leaveOut}.
     */
    boolean removedAny(String endpoint) {
        Announced a = announced.get(endpoint);
        return a != null && !a.removed.isEmpty();
    }

    /**
     * This node's caches that {@code endpoint} removed, or {@code null} when it removed none of them. (A cache a
     * peer never had is still sent: it may be one the peer is about to create, as Hibernate creates its regions
     * when its SessionFactory starts; the peer drops those events and counts them in {@code unknownCache}.)
     */
    Set<String> missing(String endpoint) {
        Announced a = announced.get(endpoint);
        if (a == null || a.removed.isEmpty()) {
            return null;
        }
        Set<String> lacking = new HashSet<>(announcements.local());
        lacking.retainAll(a.removed);
        return lacking.isEmpty() ? null : lacking;
    }

    /**
     * Which of a batch's events {@code endpoint} is not sent, or {@code null} for none: those of caches it
     * removed, which are marked as left out for it. Atomic with {@link #announced}: an event is either left out
     * before the peer's announcement that it holds the cache again is taken (and the clearing that follows covers
     * it), or sent after the clearing.
     *
     * @param cacheNames the cache of each event of the batch
     */
    synchronized boolean[] leaveOut(String endpoint, List<String> cacheNames) {
        Set<String> skip = missing(endpoint);
        if (skip == null) {
            return null;
        }
        boolean[] out = null;
        for (int i = 0; i < cacheNames.size(); i++) {
            if (skip.contains(cacheNames.get(i))) {
                if (out == null) {
                    out = new boolean[cacheNames.size()];
                }
                out[i] = true;
                markLeftOut(endpoint, cacheNames.get(i));
            }
        }
        return out;
    }

    /** {@code all} without the peers that removed {@code cacheName} (marked as left out for it). */
    List<Peer> holding(List<Peer> all, String cacheName) {
        boolean anyRemoved = false;
        for (Peer p : all) {
            anyRemoved |= removedBy(p.endpoint(), cacheName);
        }
        if (!anyRemoved) {
            return all;
        }
        synchronized (this) {
            List<Peer> some = null;
            for (int i = 0; i < all.size(); i++) {
                Peer p = all.get(i);
                if (!removedBy(p.endpoint(), cacheName)) {
                    if (some != null) {
                        some.add(p);
                    }
                } else {
                    if (some == null) {
                        some = new ArrayList<>(all.subList(0, i));
                    }
                    markLeftOut(p.endpoint(), cacheName);
                }
            }
            return some == null ? all : some;
        }
    }

    private void markLeftOut(String endpoint, String cacheName) {
        leftOut.computeIfAbsent(endpoint, k -> new HashSet<>()).add(cacheName);
    }

    /**
     * A peer announced the caches it replicates ({@code null}: take it to hold every cache) and those it removed;
     * an announcement older than the one it replaces is ignored.
     */
    void announced(String endpoint, long peerRun, long peerVersion, Set<String> caches, Set<String> removed) {
        if (!announcements.knows(endpoint)) {
            return; // not a peer of this node (yet): it is taken to hold every cache, the safe side
        }
        Announced now = new Announced(peerRun, peerVersion, caches, removed);
        Announced kept = announced.compute(endpoint,
                (k, old) -> old != null && old.run == peerRun && old.version >= peerVersion ? old : now);
        if (kept != now) {
            return;
        }
        Long lastRun = runs.put(endpoint, peerRun);
        synchronized (this) {
            Set<String> skipped = leftOut.get(endpoint);
            if (lastRun != null && lastRun != peerRun) {
                leftOut.remove(endpoint); // a new run of the peer: its caches are new, nothing of before to clear
            } else if (skipped != null) {
                List<String> added = new ArrayList<>();
                for (String cache : skipped) {
                    if (!removed.contains(cache)) {
                        added.add(cache);
                    }
                }
                if (!added.isEmpty()) {
                    skipped.removeAll(added);
                    clearOn(endpoint, added); // sent before its events are: the peer clears, then applies them
                }
            }
        }
        LOG.debug("ehrelay: CacheManager {}: peer {} replicates {}", cacheManagerName, endpoint,
                caches == null ? "(every cache)" : caches);
    }

    /**
     * The peer holds caches again whose events were not sent to it meanwhile: its copies may be older than this
     * node's, so they are cleared there (a {@code removeAll} sent to it alone; not replicated further).
     */
    private void clearOn(String endpoint, List<String> caches) {
        LOG.info("ehrelay: CacheManager {}: peer {} holds {} again, whose events it was not sent while it lacked "
                + "them; clearing its copy", cacheManagerName, endpoint, caches);
        List<byte[]> events = new ArrayList<>(caches.size());
        int size = 0;
        for (String cache : caches) {
            try {
                byte[] e = EventCodec.encodeRemoveAll(cache);
                events.add(e);
                size += e.length;
            } catch (IOException e) {
                throw new IllegalStateException(e); // a removeAll holds only the cache name
            }
        }
        Peer peer = new Peer(endpoint);
        try {
            transport.send(peer, new Batch(EventCodec.batch(events, size), events.size()), false)
                    .whenComplete((ok, failure) -> {
                        if (failure != null) {
                            // not cleared: left out again, so the next announcement retries
                            synchronized (Membership.this) {
                                for (String c : caches) {
                                    markLeftOut(endpoint, c);
                                }
                            }
                        }
                    });
        } catch (RuntimeException e) {
            for (String c : caches) {
                markLeftOut(endpoint, c);
            }
        }
    }

    /** The peer directory changed: newcomers hear the current announcement, those that left are forgotten. */
    void peersChanged(List<Peer> peers) {
        for (String gone : announcements.peersChanged(peers)) {
            synchronized (this) {
                forget(gone);
                runs.remove(gone);
                leftOut.remove(gone);
            }
        }
    }

    /** A send to the peer failed: it may be restarting, with other caches; take it to hold every cache. */
    void unreachable(String endpoint) {
        // a peer that said it holds nothing (it left) stays so: a restart announces itself as a new run
        announced.computeIfPresent(endpoint, (k, a) -> a.holdsNothing() ? a : null);
    }

    private void forget(String endpoint) {
        announced.remove(endpoint);
    }

    /** A cache was added or started its bootstrap here: announced once this node names its caches. */
    void localAdded() {
        announcements.localAdded();
    }

    /** A cache was removed here: from now on this node names its caches. */
    void localRemoved() {
        announcements.localRemoved();
    }

    /** See {@link Announcements#localAddedAndWait}. */
    void localAddedAndWait(long timeoutMillis) throws InterruptedException {
        announcements.localAddedAndWait(timeoutMillis);
    }

    /** See {@link Announcements#leaving}. */
    void leaving(long timeoutMillis) throws InterruptedException {
        announcements.leaving(timeoutMillis);
    }

    /** A batch reached {@code endpoint}: if the last announcement to it was lost, send it again now. */
    void delivered(String endpoint) {
        announcements.delivered(endpoint);
    }

    /** Sends announcements that were not delivered again, at most once a second (called on idle beats). */
    void retryUndelivered() {
        announcements.retryUndelivered();
    }

    /** {@code endpoint} sent an event of a cache this node does not have: tell it what this node has (rate-limited). */
    void sentUnknownCache(String endpoint) {
        announcements.sentUnknownCache(endpoint);
    }
}
