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
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.function.Supplier;

import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;

/**
 * This node's side of {@link Membership}: what it announces to its peers — "every cache" at the start of a run,
 * then, once there is a reason, the caches it holds and those it removed — numbered within the run, sent to
 * newcomers and again to a peer that missed one. Thread-safe.
 */
final class Announcements {

    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * The pauses before an acknowledged announcement is sent again to a peer it failed to reach: longer than the
     * first steps of a channel's backoff (100 ms, then 200 ms), so that each attempt really connects.
     */
    private static final long[] RETRY_PAUSES_MILLIS = {150, 300};

    private final Transport transport;
    private final Supplier<Collection<String>> localCaches;
    private final Clock clock;
    private final Predicate<String> heldNothing;
    private final long run;
    /** Peers whose last announcement from this node was not delivered. */
    private final Set<String> undelivered = ConcurrentHashMap.newKeySet();
    /** When each peer was last answered for sending an event of a cache this node lacks. */
    private final Map<String, Long> reannounced = new ConcurrentHashMap<>();
    private volatile long lastRetry;

    // guarded by this: the announcement as it stands
    /** Whether this node names its caches yet (else it says "every cache"). */
    private boolean naming;
    private volatile Set<String> local = Collections.emptySet();
    /** Caches removed here in this run and not added again. */
    private final Set<String> removedHere = new LinkedHashSet<>();
    private long version = 1;
    private volatile List<Peer> known = Collections.emptyList();
    /** The endpoints of {@link #known}: only these are listened to and answered (a sender name is not trusted). */
    private volatile Set<String> knownEndpoints = Collections.emptySet();

    /**
     * @param localCaches the caches this node replicates now (live or bootstrapping ones)
     * @param heldNothing whether a peer said it holds no cache (it left): an announcement it missed is not retried
     */
    Announcements(Transport transport, Supplier<Collection<String>> localCaches, Clock clock,
                  Predicate<String> heldNothing) {
        this.transport = transport;
        this.heldNothing = heldNothing;
        this.localCaches = localCaches;
        this.clock = clock;
        this.lastRetry = clock.nanoTime() - RETRY_NANOS;
        long r;
        SecureRandom random = new SecureRandom();
        do {
            r = random.nextLong();
        } while (r == 0);
        this.run = r;
    }

    /** This node's caches as last announced (or about to be). */
    Set<String> local() {
        return local;
    }

    /** Whether {@code endpoint} is one of this node's peers: only those are listened to and answered. */
    boolean knows(String endpoint) {
        return knownEndpoints.contains(endpoint);
    }

    /**
     * The peer directory changed: newcomers hear the current announcement. Returns the endpoints that left (what
     * this side kept of them is dropped).
     */
    List<String> peersChanged(List<Peer> peers) {
        List<Peer> newcomers = new ArrayList<>();
        List<String> left = new ArrayList<>();
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
            knownEndpoints = Collections.unmodifiableSet(now);
            for (String gone : before) {
                if (!now.contains(gone)) {
                    left.add(gone);
                    undelivered.remove(gone);
                    reannounced.remove(gone);
                }
            }
            send(newcomers);
        }
        return left;
    }

    /** A cache was added or started its bootstrap here: announced once this node names its caches. */
    void localAdded() {
        synchronized (this) {
            if (refreshLocal() && naming) {
                announceNext();
            }
        }
    }

    /** A cache was removed here: from now on this node names its caches. */
    void localRemoved() {
        synchronized (this) {
            if (refreshLocal() || !naming) {
                naming = true;
                announceNext();
            }
        }
    }

    /**
     * {@link #localAdded()}, then waits up to {@code timeoutMillis} until every peer took the announcement
     * (acknowledged it), so that events of a cache about to load its content are not held back from this node
     * meanwhile. Nothing to wait for while this node says "every cache".
     */
    void localAddedAndWait(long timeoutMillis) throws InterruptedException {
        List<Peer> to;
        byte[] current;
        synchronized (this) {
            boolean changed = refreshLocal();
            if (!naming) {
                return;
            }
            if (changed) {
                announceNext();
            }
            to = known;
            current = EventCodec.membershipBatch(local, removedHere, run, version);
        }
        // the same announcement again, acknowledged: once applied, so is the one before it (order per peer). Sent
        // outside the lock: a transport may make an acknowledged call on the calling thread
        sendAndWait(to, current, timeoutMillis);
    }

    /**
     * Sends {@code announcement} acknowledged to {@code to} and waits up to {@code timeoutMillis} in all for the
     * peers to take it; a peer it cannot be handed to is marked undelivered (announced again when reached).
     *
     * <p>A send that fails is made again after {@link #RETRY_PAUSES_MILLIS} (while time is left): one failed
     * connection puts a channel in its backoff, and every send meanwhile fails at once, so a stopping node's
     * leaving would be lost to a peer that is up, which then keeps waiting for it (a synchronous put fails). A
     * peer that said it holds nothing (it left) is not tried again; one that crashed costs these pauses once.
     */
    private void sendAndWait(List<Peer> to, byte[] announcement, long timeoutMillis) throws InterruptedException {
        long deadline = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        Batch batch = new Batch(announcement, 0).withDeadline(deadline);
        List<Peer> sendTo = to;
        for (int attempt = 0; !sendTo.isEmpty(); attempt++) {
            List<Peer> failed = sendAndWaitOnce(sendTo, batch, deadline);
            failed.removeIf(p -> heldNothing.test(p.endpoint()));
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanoTime());
            if (failed.isEmpty() || attempt == RETRY_PAUSES_MILLIS.length
                    || left <= RETRY_PAUSES_MILLIS[attempt]) {
                for (Peer p : failed) {
                    undelivered.add(p.endpoint());
                }
                return;
            }
            Thread.sleep(RETRY_PAUSES_MILLIS[attempt]);
            sendTo = failed;
        }
    }

    /** One round of {@link #sendAndWait}: the peers whose send failed (not those still answering at the deadline). */
    private List<Peer> sendAndWaitOnce(List<Peer> to, Batch batch, long deadline) throws InterruptedException {
        List<Peer> failed = new ArrayList<>(0);
        List<Peer> asked = new ArrayList<>(to.size());
        List<CompletableFuture<Void>> sent = new ArrayList<>(to.size());
        for (Peer peer : to) {
            try {
                sent.add(transport.send(peer, batch, true));
                asked.add(peer);
            } catch (RuntimeException e) {
                failed.add(peer);
            }
        }
        for (int i = 0; i < sent.size(); i++) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanoTime());
            if (left <= 0) {
                break;
            }
            Throwable failure = SendRound.await(sent.get(i), left);
            if (failure != null && !(failure instanceof TimeoutException)) {
                failed.add(asked.get(i));
            }
        }
        return failed;
    }

    /**
     * This node is stopping: tells every peer it holds none of its caches any more, as if each was removed, so
     * that the peers stop listing it ({@code listRemoteCachePeers}) and sending to it at once instead of when a
     * send fails; waits up to {@code timeoutMillis} for them to take it. A restart is a new run, which peers take
     * afresh ("every cache"), clearing nothing.
     */
    void leaving(long timeoutMillis) throws InterruptedException {
        List<Peer> to;
        byte[] current;
        synchronized (this) {
            removedHere.addAll(local);
            local = Collections.emptySet();
            naming = true;
            version++;
            to = known;
            current = EventCodec.membershipBatch(local, removedHere, run, version);
        }
        sendAndWait(to, current, timeoutMillis);
    }

    /** Reads this node's caches again; whether they changed (guarded by {@code this}). */
    private boolean refreshLocal() {
        Set<String> now = Collections.unmodifiableSet(new LinkedHashSet<>(localCaches.get()));
        if (now.equals(local)) {
            return false;
        }
        for (String gone : local) {
            if (!now.contains(gone)) {
                removedHere.add(gone);
            }
        }
        removedHere.removeAll(now);
        local = now;
        return true;
    }

    /** Numbers and sends a new announcement to every peer (guarded by {@code this}). */
    private void announceNext() {
        version++;
        send(known);
    }

    /** A batch reached {@code endpoint}: if the last announcement to it was lost, send it again now. */
    void delivered(String endpoint) {
        if (!undelivered.isEmpty() && undelivered.contains(endpoint)) {
            synchronized (this) {
                if (undelivered.remove(endpoint)) {
                    send(Collections.singletonList(new Peer(endpoint)));
                }
            }
        }
    }

    /** Sends announcements that were not delivered again, at most once a second (called on idle beats). */
    void retryUndelivered() {
        long now = clock.nanoTime();
        if (undelivered.isEmpty() || now - lastRetry < RETRY_NANOS) {
            return;
        }
        lastRetry = now;
        synchronized (this) {
            List<Peer> again = new ArrayList<>();
            for (Peer p : known) {
                if (undelivered.remove(p.endpoint())) {
                    again.add(p);
                }
            }
            send(again);
        }
    }

    /** {@code endpoint} sent an event of a cache this node does not have: tell it what this node has (rate-limited). */
    void sentUnknownCache(String endpoint) {
        if (!knownEndpoints.contains(endpoint)) {
            return; // answer peers only: a sender's name does not make it one
        }
        long now = clock.nanoTime();
        Long last = reannounced.get(endpoint);
        if (last != null && now - last < Membership.REANNOUNCE_NANOS) {
            return;
        }
        reannounced.put(endpoint, now);
        synchronized (this) {
            if (!naming) {
                naming = true;
                refreshLocal();
                announceNext(); // to every peer: the others may not know either
            } else {
                send(Collections.singletonList(new Peer(endpoint)));
            }
        }
    }

    /**
     * Sends the current announcement, in order with earlier ones (guarded by {@code this}). Unacknowledged: the
     * caller may be the application's thread (adding or removing a cache), which must not wait for peers.
     */
    private void send(List<Peer> to) {
        if (to.isEmpty()) {
            return;
        }
        Batch batch = new Batch(naming ? EventCodec.membershipBatch(local, removedHere, run, version)
                : EventCodec.membershipBatch(null, Collections.<String>emptySet(), run, version), 0);
        for (Peer peer : to) {
            try {
                transport.send(peer, batch, false).whenComplete((ok, failure) -> {
                    if (failure != null) {
                        undelivered.add(peer.endpoint());
                    }
                });
            } catch (RuntimeException e) {
                undelivered.add(peer.endpoint());
            }
        }
    }
}
