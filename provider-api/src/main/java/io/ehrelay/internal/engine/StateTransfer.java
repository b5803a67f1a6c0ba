package io.ehrelay.internal.engine;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import io.ehrelay.internal.Futures;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.DecodedBatch;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.internal.codec.Rejection;
import io.ehrelay.internal.config.BootstrapConfig;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cache's whole content between nodes: serving it to a peer (paged, the keys listed first and each element
 * read as its chunk is built, marked with this node's stream position so a resync can tell older live events
 * from newer ones), bootstrapping a cache from one peer (trying the next when one fails or answers with nothing,
 * as a peer that started at the same time does; live elements that arrived meanwhile are kept), and fetching for a resync ({@link Convergence}). Bootstraps and resyncs run on
 * the node's single background thread, created on demand and ended when idle, so caches do not add threads.
 * Thread-safe.
 */
final class StateTransfer {

    private static final Logger LOG = LoggerFactory.getLogger(StateTransfer.class);

    private final String cacheManagerName;
    private final CacheBindings caches;
    private final Transport transport;
    private final ReplicationMetrics metrics;
    private final CodecLimits limits;
    private final Supplier<List<Peer>> peers;
    private final Supplier<Dispatcher> dispatcher;
    /** What this node does with an entry it cannot apply (its key only; counted and logged). */
    private final Invalidations invalidations;
    private final BooleanSupplier stopped;
    private final ThreadFactory threads;
    private final RateLimitedLog warn;
    private final Clock clock;
    private final Ordering ordering;
    private ThreadPoolExecutor background;

    /** How long a bootstrap waits for its peers to take the announcement that this node holds the cache. */
    private static final long ANNOUNCE_WAIT_MILLIS = 5000;
    /** How long a bootstrap asks again a peer that has not added the cache yet (it is starting, too). */
    static final long STARTING_PEER_WAIT_MILLIS = 15_000;
    /** What a node answers a state request for a cache it lacks. */
    static final String NO_LIVE_CACHE = " has no live cache named '";
    /** ... and adds when the cache is in its configuration, not added yet (a peer asking recognises it). */
    static final String NOT_YET = " yet (its CacheManager is adding its configured caches)";
    /** Peers hear of a cache about to bootstrap before its snapshot is taken (see {@link Membership}). */
    private final Membership membership;

    StateTransfer(String cacheManagerName, CacheBindings caches, Transport transport, ReplicationMetrics metrics,
                  CodecLimits limits, Supplier<List<Peer>> peers, Supplier<Dispatcher> dispatcher,
                  Invalidations invalidations,
                  BooleanSupplier stopped, ThreadFactory threads, RateLimitedLog warn, Clock clock,
                  Ordering ordering, Membership membership) {
        this.membership = membership;
        this.ordering = ordering;
        this.cacheManagerName = cacheManagerName;
        this.caches = caches;
        this.transport = transport;
        this.metrics = metrics;
        this.limits = limits;
        this.peers = peers;
        this.dispatcher = dispatcher;
        this.invalidations = invalidations;
        this.stopped = stopped;
        this.threads = threads;
        this.warn = warn;
        this.clock = clock;
    }

    // ---- serving ---------------------------------------------------------------------------------------------

    /**
     * Opens a paged transfer of {@code cacheName}: its keys are listed now, elements read as each chunk is built.
     *
     * @throws IllegalArgumentException when this node has no such live cache
     */
    InboundHandler.StateCursor open(String cacheName) {
        Ehcache cache = caches.resolve(cacheName);
        if (cache == null) {
            throw new IllegalArgumentException("CacheManager " + cacheManagerName + NO_LIVE_CACHE + cacheName + "'"
                    + (caches.configured(cacheName) ? NOT_YET : ""));
        }
        CacheMetrics m = metrics.cache(cacheName);
        // the mark: this cache's stream and its last batch number before the keys are listed
        CacheBinding binding = caches.bound(cacheName);
        Dispatcher d = dispatcher.get();
        long markStream = binding == null || d == null ? 0 : d.stream(binding.lane);
        long markSeq = markStream == 0 ? 0 : d.lastSeq(binding.lane);
        VersionTable versions = binding == null ? null : binding.versions;
        // the cache's keys, then the keys it only has versions of (tombstones, ghosts); the last removeAll first
        List<?> held = cache.getKeys(); // Ehcache 2: a raw List
        LinkedHashSet<Object> all = new LinkedHashSet<Object>(held);
        Version cleared = versions == null ? null : versions.cleared();
        if (versions != null) {
            all.addAll(versions.keys());
        }
        Iterator<?> keys = all.iterator();
        boolean[] clearedSent = {cleared == null};
        return maxChunkBytes -> {
            m.servedByCurrentThread();
            List<byte[]> parts = new ArrayList<>();
            int size = 0;
            if (!clearedSent[0]) {
                byte[] ev = EventCodec.encodeStampedRemoveAll(cacheName);
                EventCodec.stamp(ev, cleared.stamp, cleared.origin, 0);
                parts.add(ev);
                size += ev.length;
                clearedSent[0] = true;
            }
            while (keys.hasNext() && size < maxChunkBytes) {
                byte[] ev = entry(cacheName, cache, versions, keys.next(), m, warn);
                if (ev != null) {
                    parts.add(ev);
                    size += ev.length;
                }
            }
            return parts.isEmpty() ? null : EventCodec.snapshotBatch(parts, size, markStream, markSeq);
        };
    }

    /**
     * The newest write of {@code key} this node knows, encoded: a stamped put of the element it holds, a stamped
     * remove (a tombstone), a stamped invalidation (a version without the value); an unstamped put for an element
     * written before its cache replicated. {@code null} when there is nothing to say or it cannot be encoded.
     */
    static byte[] entry(String cacheName, Ehcache cache, VersionTable versions, Object key, CacheMetrics m,
                        RateLimitedLog warn) {
        Version v = versions == null ? null : versions.get(key);
        Element e = cache.getQuiet(key);
        if (e != null && e.isExpired()) {
            e = null;
        }
        try {
            if (v == null) {
                return e == null ? null : EventCodec.encodePut(cacheName, e);
            }
            if (v.pending()) {
                return null; // an application write whose event is on its way: it will be replicated itself
            }
            if (v.removed || e == null || v.valueHash == 0) {
                if (e != null && v.removed) {
                    return null; // an application write not stamped yet: it will be replicated itself
                }
                return versionOf(cacheName, key, v);
            }
            int[] hashes = new int[2];
            byte[] ev = EventCodec.encodePut(cacheName, e, null, hashes);
            if (hashes[1] != v.valueHash) {
                // the cache holds another value than the version says: an application write not stamped yet
                return null;
            }
            EventCodec.stamp(ev, v.stamp, v.origin, v.valueHash);
            return ev;
        } catch (IOException | RuntimeException | Error ex) {
            return unencodable(cacheName, key, m, warn, ex);
        }
    }

    /**
     * {@code key}'s version {@code v} alone, encoded as a stamped remove (a tombstone) or invalidation (a put, or
     * a version without the value): what anti-entropy's request for versions gets. {@code null} when the key
     * cannot be encoded.
     */
    static byte[] version(String cacheName, Object key, Version v, CacheMetrics m, RateLimitedLog warn) {
        if (v.pending()) {
            return null; // not served until its event is written (it is on its way)
        }
        try {
            return versionOf(cacheName, key, v);
        } catch (IOException | RuntimeException | Error ex) {
            return unencodable(cacheName, key, m, warn, ex);
        }
    }

    private static byte[] versionOf(String cacheName, Object key, Version v) throws IOException {
        byte[] ev = EventCodec.encodeKey(v.removed ? Op.REMOVE : Op.INVALIDATE, cacheName, key, null, new int[2]);
        EventCodec.stamp(ev, v.stamp, v.origin, v.valueHash);
        return ev;
    }

    private static byte[] unencodable(String cacheName, Object key, CacheMetrics m, RateLimitedLog warn,
                                      Throwable ex) {
        m.onUnencodableInSnapshot();
        warn.warn("bootstrap-encode:" + cacheName, "ehrelay: element {} of cache {} cannot be encoded "
                + "for a peer's state transfer and is skipped (counted in unencodable): {}", key, cacheName,
                ex.toString());
        return null;
    }

    // ---- loading ---------------------------------------------------------------------------------------------

    /** Loads {@code cache} from one peer; on the background thread when {@code bc} is asynchronous. */
    void bootstrap(Ehcache cache, BootstrapConfig bc, long clusterFormMillis) {
        caches.initializing(cache);
        if (!bc.asynchronous()) {
            load(cache, bc, clusterFormMillis);
            return;
        }
        inBackground(() -> load(cache, bc, clusterFormMillis));
    }

    /** Runs {@code task} on the node's single background thread (created on demand, ends when idle). */
    synchronized void inBackground(Runnable task) {
        if (stopped.getAsBoolean()) {
            return;
        }
        if (background == null) {
            background = new ThreadPoolExecutor(1, 1, 5, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                    threads);
            background.allowCoreThreadTimeOut(true);
        }
        background.execute(task);
    }

    synchronized void stop() {
        if (background != null) {
            background.shutdownNow();
        }
    }

    private void load(Ehcache cache, BootstrapConfig bc, long clusterFormMillis) {
        String name = cache.getName();
        CacheMetrics m = metrics.cache(name);
        long t0 = clock.nanoTime();
        long waitUntil = t0 + TimeUnit.MILLISECONDS.toNanos(clusterFormMillis);
        while (peers.get().isEmpty() && clock.nanoTime() - waitUntil < 0 && !stopped.getAsBoolean()) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        List<Peer> candidates = new ArrayList<>(peers.get());
        try {
            // the peers must send this node the cache's events from before the snapshot is taken on
            membership.localAddedAndWait(ANNOUNCE_WAIT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        candidates.removeIf(p -> !membership.has(p.endpoint(), name));
        if (candidates.isEmpty()) {
            LOG.info("ehrelay: no peers to bootstrap cache {} of CacheManager {} from", name, cacheManagerName);
            return;
        }
        Collections.shuffle(candidates);
        // a peer still starting (its CacheManager has not added the configured cache yet) is asked again, quietly,
        // for a while
        long startingUntil = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STARTING_PEER_WAIT_MILLIS);
        long pause = 100;
        // a peer that answers with nothing may itself have just started (two nodes joining at once find each other
        // empty): the next is asked too, until one answers with elements; each answer keeps the newer write per key
        List<Peer> answeredEmpty = new ArrayList<>();
        for (int round = 0; ; round++) {
            List<String> failures = new ArrayList<>();
            boolean starting = false;
            for (Peer peer : candidates) {
                if (answeredEmpty.contains(peer)) {
                    continue;
                }
                AtomicLong loaded = new AtomicLong();
                AtomicLong values = new AtomicLong();
                Throwable failure;
                try {
                    failure = fetch(peer, cache, bc.maximumChunkSizeBytes(), bc.timeoutMillis(), loaded, values);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                if (failure == null && values.get() == 0) {
                    // no element (at most removes and invalidations, kept): the next peer may hold the values
                    answeredEmpty.add(peer);
                    continue;
                }
                if (failure == null) {
                    bootstrapped(m, name, t0, values.get(), peer + emptyToo(answeredEmpty));
                    return;
                }
                String why = firstLine(SendRound.describe(failure));
                failures.add(peer + " (" + why + ")");
                if (stillStarting(failure)) {
                    starting = true;
                    LOG.debug("ehrelay: bootstrap of cache {} from {}: the peer has not added it yet; asking again",
                            name, peer);
                } else if (round == 0) {
                    LOG.warn("ehrelay: bootstrap of cache {} from {} failed: {}; trying the next peer", name, peer,
                            why);
                }
            }
            if (!answeredEmpty.isEmpty() && (!starting || clock.nanoTime() - startingUntil >= 0
                    || stopped.getAsBoolean())) {
                bootstrapped(m, name, t0, 0, answeredEmpty.size() == 1 ? answeredEmpty.get(0).toString()
                        : "every peer that answered " + answeredEmpty);
                return;
            }
            if (!starting || clock.nanoTime() - startingUntil >= 0 || stopped.getAsBoolean()) {
                m.onBootstrapFailure();
                LOG.warn("ehrelay: could not bootstrap cache {} of CacheManager {} from any peer: {}", name,
                        cacheManagerName, failures);
                return;
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            pause = Math.min(1000, pause * 2);
        }
    }

    private void bootstrapped(CacheMetrics m, String name, long t0, long elements, String from) {
        long nanos = clock.nanoTime() - t0;
        m.onBootstrap(nanos);
        LOG.info("ehrelay: bootstrapped cache {} of CacheManager {} with {} elements from {} in {} ms", name,
                cacheManagerName, elements, from, TimeUnit.NANOSECONDS.toMillis(nanos));
    }

    private static String emptyToo(List<Peer> answeredEmpty) {
        return answeredEmpty.isEmpty() ? "" : " (" + answeredEmpty + " answered without elements)";
    }

    /** Whether a peer refused a state request because it has not added a cache of its configuration yet. */
    static boolean stillStarting(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains(NOT_YET)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a peer refused a request because it holds no live cache of that name: one it is still adding, or one
     * it does not replicate.
     */
    static boolean lacksCache(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains(NO_LIVE_CACHE)) {
                return true;
            }
        }
        return false;
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl).trim();
    }

    /**
     * Asks {@code peer} for {@code cache}'s content and applies it key by key, keeping the newer write
     * ({@link Ordering}); counts the entries in {@code loaded} and the keys changed in {@code keysRepaired}
     * (a bootstrap of an empty cache counts none: nothing was repaired).
     *
     * @return why it failed, or {@code null}
     */
    Throwable fetch(Peer peer, Ehcache cache, int maxChunkBytes, long timeoutMillis, AtomicLong loaded)
            throws InterruptedException {
        return fetch(peer, cache, maxChunkBytes, timeoutMillis, loaded, new AtomicLong());
    }

    /** As above; counts in {@code values} the entries that carried a value (the others: removes, invalidations). */
    Throwable fetch(Peer peer, Ehcache cache, int maxChunkBytes, long timeoutMillis, AtomicLong loaded,
                    AtomicLong values) throws InterruptedException {
        return fetch(peer, cache.getName(), cache, maxChunkBytes, timeoutMillis, loaded, values,
                cache.getSize() > 0);
    }

    /** As above, asking for {@code request} (a cache name, or an anti-entropy request for it). */
    Throwable fetch(Peer peer, String request, Ehcache cache, int maxChunkBytes, long timeoutMillis,
                    AtomicLong loaded, boolean countRepairs) throws InterruptedException {
        return fetch(peer, request, cache, maxChunkBytes, timeoutMillis, loaded, new AtomicLong(), countRepairs);
    }

    private Throwable fetch(Peer peer, String request, Ehcache cache, int maxChunkBytes, long timeoutMillis,
                            AtomicLong loaded, AtomicLong values, boolean countRepairs) throws InterruptedException {
        CacheMetrics m = metrics.cache(cache.getName());
        CompletableFuture<Void> f;
        try {
            f = transport.requestState(peer, request, maxChunkBytes,
                    chunk -> loaded.addAndGet(applyChunk(peer.endpoint(), cache, m, chunk, countRepairs, values)));
        } catch (RuntimeException e) {
            f = Futures.failed(e);
        }
        return SendRound.await(f, timeoutMillis);
    }

    /** Decodes a chunk a peer served (state transfer or anti-entropy); a damaged one is counted and thrown. */
    static DecodedBatch decodeChunk(byte[] chunk, CodecLimits limits, ReplicationMetrics metrics)
            throws MalformedFrameException {
        try {
            return EventDecoder.decodeBatch(chunk, 0, chunk.length, limits);
        } catch (MalformedFrameException e) {
            metrics.markMalformedFrame();
            throw e;
        }
    }

    private int applyChunk(String fromPeer, Ehcache cache, CacheMetrics m, byte[] chunk, boolean countRepairs,
                           AtomicLong values) throws MalformedFrameException {
        DecodedBatch decoded = decodeChunk(chunk, limits, metrics);
        m.servedByCurrentThread();
        CacheBinding binding = caches.bind(cache.getName());
        int n = 0;
        long repaired = 0;
        for (ReplicationEvent ev : decoded.events()) {
            if (!ev.cacheName().equals(cache.getName())) {
                throw new MalformedFrameException("state chunk holds " + ev + ", not an entry of " + cache.getName());
            }
            Rejection rejected = decoded.rejectionOf(ev);
            if (rejected != null) {
                // its invalidation is this loop's: a snapshot is applied differently
                invalidations.undecodable(fromPeer, rejected, caches.resolve(rejected.cacheName()) != null);
                if (ev.key() == null) {
                    continue;
                }
            }
            if (ev.op() == Op.PUT) {
                values.incrementAndGet();
            }
            if (ev.stamp() == 0) {
                if (ev.op() != Op.PUT) {
                    throw new MalformedFrameException("state chunk holds an unstamped " + ev);
                }
                // written before its cache replicated on the peer: taken only where this node knows nothing newer
                if (binding.versions.get(ev.key()) == null && cache.putIfAbsent(ev.toElement(), true) == null) {
                    repaired++;
                }
                n++;
                continue;
            }
            try {
                if (ordering.apply(binding, cache, ev) == VersionTable.Outcome.APPLIED) {
                    repaired++;
                }
            } catch (RuntimeException e) {
                invalidations.applyFailed(fromPeer, cache, m, ev, e);
            }
            n++;
        }
        if (countRepairs) {
            m.onRepaired(repaired);
        }
        return n;
    }
}
