package io.ehrelay.internal.engine;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;

/**
 * Which caches each peer replicates, so that a node is not sent the events of a cache it removed or never had,
 * and {@code listRemoteCachePeers(cache)} lists only the peers that hold {@code cache}.
 *
 * <p>Each node announces the caches it replicates ({@link EventCodec#membershipBatch}): to every peer whenever
 * the set changes here (a cache added, starting its bootstrap, or removed), to a peer that newly appears in the
 * directory, again to a peer that sent this node an event of a cache it does not have (at most once per
 * {@link #REANNOUNCE_NANOS}), and again to a peer that could not take the last announcement as soon as a batch
 * reaches it. Announcements are numbered within a run of the node, so a late one never replaces a newer one.
 *
 * <p>A peer that has not announced anything (an older ehrelay, stock Ehcache, one not heard from yet) is assumed
 * to hold every cache: being sent an event it drops costs little, missing one it needed would leave it stale. A
 * peer that leaves the directory is forgotten. Before a cache here loads its content from a peer (bootstrap),
 * the node waits until its peers have taken the announcement that names the cache, so no event of the cache is
 * held back from it while the snapshot is taken. Thread-safe.
 */
final class Membership {

    private static final Logger LOG = LoggerFactory.getLogger(Membership.class);
    static final long REANNOUNCE_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** What one peer announced: its run, the announcement's number and the caches. */
    private static final class Announced {
        final long run;
        final long version;
        final Set<String> caches;

        Announced(long run, long version, Set<String> caches) {
            this.run = run;
            this.version = version;
            this.caches = caches;
        }
    }

    private final String cacheManagerName;
    private final Transport transport;
    private final Supplier<Collection<String>> localCaches;
    private final Clock clock;
    private final long run;

    private final Map<String, Announced> announced = new ConcurrentHashMap<>();
    /** Per peer: this node's caches the peer does not hold (absent: it holds them all, or has not said). */
    private final Map<String, Set<String>> missing = new ConcurrentHashMap<>();
    /** Peers whose last announcement from this node was not delivered. */
    private final Set<String> undelivered = ConcurrentHashMap.newKeySet();
    /** When each peer was last answered with an announcement for sending an event of a cache this node lacks. */
    private final Map<String, Long> reannounced = new ConcurrentHashMap<>();
    /** This node's caches as last announced, and the announcement's number (guarded by {@code this}). */
    private Set<String> local = Collections.emptySet();
    private long version;
    private volatile List<Peer> known = Collections.emptyList();

    /** @param localCaches the caches this node replicates now (live or bootstrapping ones) */
    Membership(String cacheManagerName, Transport transport, Supplier<Collection<String>> localCaches, Clock clock) {
        this.cacheManagerName = cacheManagerName;
        this.transport = transport;
        this.localCaches = localCaches;
        this.clock = clock;
        long r;
        SecureRandom random = new SecureRandom();
        do {
            r = random.nextLong();
        } while (r == 0);
        this.run = r;
    }

    /** Whether {@code endpoint} holds {@code cacheName} as far as this node knows (yes, unless it said no). */
    boolean has(String endpoint, String cacheName) {
        Announced a = announced.get(endpoint);
        return a == null || a.caches.contains(cacheName);
    }

    /**
     * This node's caches that {@code endpoint} does not hold, or {@code null} when it holds them all (or has
     * not said): the dispatcher's one lookup per peer and batch.
     */
    Set<String> missing(String endpoint) {
        return missing.isEmpty() ? null : missing.get(endpoint);
    }

    /** A peer announced the caches it replicates; an announcement older than the one it replaces is ignored. */
    void announced(String endpoint, long peerRun, long peerVersion, Set<String> caches) {
        Announced now = new Announced(peerRun, peerVersion, caches);
        Announced before = announced.compute(endpoint,
                (k, old) -> old != null && old.run == peerRun && old.version >= peerVersion ? old : now);
        if (before == now) {
            synchronized (this) {
                recompute(endpoint);
            }
            LOG.debug("ehrelay: CacheManager {}: peer {} replicates {}", cacheManagerName, endpoint, caches);
        }
    }

    /** The peer directory changed: announce to newcomers, forget those that left. */
    void peersChanged(List<Peer> peers) {
        List<Peer> newcomers = new ArrayList<>();
        synchronized (this) {
            Set<String> before = new HashSet<>();
            for (Peer p : known) {
                before.add(p.endpoint());
            }
            Set<String> now = new HashSet<>();
            for (Peer p : peers) {
                now.add(p.endpoint());
                if (!before.contains(p.endpoint())) {
                    newcomers.add(p);
                }
            }
            known = peers;
            for (String gone : before) {
                if (!now.contains(gone)) {
                    announced.remove(gone);
                    missing.remove(gone);
                    undelivered.remove(gone);
                    reannounced.remove(gone);
                }
            }
            if (version > 0) {
                send(newcomers, false);
            }
        }
    }

    /** A cache was added, started its bootstrap, or was removed here: tell every peer if the set changed. */
    void localChanged() {
        announceChange();
    }

    /**
     * Like {@link #localChanged()}, then waits up to {@code timeoutMillis} until every peer took the
     * announcement (acknowledged it, where the transport can tell), so that events of a cache about to load its
     * content are not held back from this node meanwhile.
     */
    void localChangedAndWait(long timeoutMillis) throws InterruptedException {
        List<CompletableFuture<Void>> sent = announceChange();
        long deadline = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        for (CompletableFuture<Void> f : sent) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanoTime());
            SendRound.await(f, Math.max(1, left));
        }
    }

    private synchronized List<CompletableFuture<Void>> announceChange() {
        Set<String> now = Collections.unmodifiableSet(new LinkedHashSet<>(localCaches.get()));
        if (version > 0 && now.equals(local)) {
            return Collections.emptyList();
        }
        local = now;
        version++;
        for (String endpoint : announced.keySet()) {
            recompute(endpoint);
        }
        return send(known, true);
    }

    /** A batch reached {@code endpoint}: if the last announcement to it was lost, send it again now. */
    void delivered(String endpoint) {
        if (!undelivered.isEmpty() && undelivered.contains(endpoint)) {
            synchronized (this) {
                if (undelivered.remove(endpoint)) {
                    send(Collections.singletonList(new Peer(endpoint)), false);
                }
            }
        }
    }

    /** {@code endpoint} sent an event of a cache this node does not have: tell it what this node has (rate-limited). */
    void sentUnknownCache(String endpoint) {
        long now = clock.nanoTime();
        Long last = reannounced.get(endpoint);
        if (last != null && now - last < REANNOUNCE_NANOS) {
            return;
        }
        reannounced.put(endpoint, now);
        synchronized (this) {
            if (version == 0) {
                announceChange();
            } else {
                send(Collections.singletonList(new Peer(endpoint)), false);
            }
        }
    }

    /** Guarded by {@code this}. */
    private void recompute(String endpoint) {
        Announced theirs = announced.get(endpoint);
        if (theirs == null) {
            missing.remove(endpoint);
            return;
        }
        Set<String> lacking = new HashSet<>(local);
        lacking.removeAll(theirs.caches);
        if (lacking.isEmpty()) {
            missing.remove(endpoint);
        } else {
            missing.put(endpoint, Collections.unmodifiableSet(lacking));
        }
    }

    /** Sends the current announcement, in order with earlier ones (guarded by {@code this}). */
    private List<CompletableFuture<Void>> send(List<Peer> to, boolean acknowledge) {
        if (to.isEmpty()) {
            return Collections.emptyList();
        }
        Batch batch = new Batch(EventCodec.membershipBatch(local, run, version), 0);
        List<CompletableFuture<Void>> out = new ArrayList<>(to.size());
        for (Peer peer : to) {
            CompletableFuture<Void> f;
            try {
                f = transport.send(peer, batch, acknowledge);
            } catch (RuntimeException e) {
                f = io.ehrelay.internal.Futures.failed(e);
            }
            f.whenComplete((ok, failure) -> {
                if (failure != null) {
                    undelivered.add(peer.endpoint());
                }
            });
            out.add(f);
        }
        return out;
    }
}
