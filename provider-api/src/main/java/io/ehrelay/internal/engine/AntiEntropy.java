package io.ehrelay.internal.engine;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.ehrelay.internal.Futures;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.DecodedBatch;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.Ehcache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Anti-entropy, the pulling side: every {@code antiEntropyIntervalMillis} this node compares each replicated cache
 * with each peer that holds it — first the peer's digest (its last removeAll and {@value VersionTable#LEAVES}
 * leaves), then the versions in the leaves that differ, then the entries of those leaves that hold a newer
 * write — and keeps each newer write at least one interval old
 * ({@link AntiEntropyServer} answers the peers' rounds). A round that repaired keys is followed after a fifth of
 * the interval. How and why: docs/reliability.md, "Missed events: resync at once, anti-entropy always". Rounds
 * run on the node's background thread; before each, tombstones past their retention are dropped. Thread-safe.
 */
final class AntiEntropy implements ConvergenceMBean {

    private static final Logger LOG = LoggerFactory.getLogger(AntiEntropy.class);

    private static final long REQUEST_TIMEOUT_MILLIS = 30_000;
    /** How long a peer that refused a request for versions is asked for entries at once. */
    private static final long VERSIONS_RETRY_MILLIS = 600_000;

    private final String cacheManagerName;
    private final NodeConfig config;
    private final Transport transport;
    private final CacheBindings caches;
    private final Function<String, List<Peer>> peersHolding;
    private final StateTransfer state;
    private final Ordering ordering;
    private final ReplicationMetrics metrics;
    private final CodecLimits limits;
    private final Clock clock;
    private final BooleanSupplier running;
    private final RateLimitedLog warn;
    private final AtomicBoolean roundQueued = new AtomicBoolean();
    private volatile long nextRoundNanos;
    /** Per peer endpoint: when its every cache was last found equal (wall-clock ms). */
    private final Map<String, Long> lastAgreement = new ConcurrentHashMap<>();
    private final AtomicLong bytesFetched = new AtomicLong();
    /** Per peer endpoint: when it last refused a request for versions (an older ehrelay), wall-clock ms. */
    private final Map<String, Long> versionsRefused = new ConcurrentHashMap<>();

    private volatile long differingKeys;
    /** Keys repaired by this node's rounds so far. */
    private final AtomicLong repaired = new AtomicLong();
    private final AtomicLong roundsStarted = new AtomicLong();
    /** The round whose {@link #differingKeys} is published; guarded by {@code this}. */
    private long publishedRound;

    AntiEntropy(String cacheManagerName, NodeConfig config, Transport transport, CacheBindings caches,
                Function<String, List<Peer>> peersHolding, StateTransfer state, Ordering ordering,
                ReplicationMetrics metrics, Clock clock, BooleanSupplier running, RateLimitedLog warn) {
        this.cacheManagerName = cacheManagerName;
        this.config = config;
        this.transport = transport;
        this.caches = caches;
        this.peersHolding = peersHolding;
        this.state = state;
        this.ordering = ordering;
        this.metrics = metrics;
        this.limits = config.limits();
        this.clock = clock;
        this.running = running;
        this.warn = warn;
        this.nextRoundNanos = clock.nanoTime() + jittered(periodMillis());
        metrics.meter(MetricNames.ANTI_ENTROPY_ROUNDS);
        metrics.meter(MetricNames.ANTI_ENTROPY_FAILURES);
        metrics.gauge("antiEntropyBytes", bytesFetched::get);
        metrics.gauge("differingKeys", () -> differingKeys);
    }

    private static long jittered(long millis) {
        long nanos = TimeUnit.MILLISECONDS.toNanos(millis);
        return nanos - nanos / 10 + ThreadLocalRandom.current().nextLong(nanos / 5 + 1);
    }

    /** Called often (the dispatcher's loop): queues a round on the background thread when one is due. */
    void tick() {
        long interval = config.antiEntropyIntervalMillis();
        if (clock.nanoTime() - nextRoundNanos < 0 || !running.getAsBoolean()
                || !roundQueued.compareAndSet(false, true)) {
            return;
        }
        nextRoundNanos = clock.nanoTime() + jittered(periodMillis());
        state.inBackground(() -> {
            try {
                if (interval > 0) {
                    long before = repaired.get();
                    round(false);
                    if (repaired.get() != before) {
                        // a real divergence: go on soon rather than an interval later
                        nextRoundNanos = clock.nanoTime() + jittered(Math.max(200, Math.min(1000, interval / 5)));
                    }
                } else {
                    sweepAll();
                }
            } finally {
                roundQueued.set(false);
            }
        });
    }

    @Override
    public String checkNow() {
        Map<String, Long> found = round(true);
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Long> e : found.entrySet()) {
            sb.append(sb.length() == 0 ? "" : " ").append(e.getKey()).append('=').append(e.getValue());
        }
        return sb.length() == 0 ? "no peers" : sb.toString();
    }

    @Override
    public String getLastAgreement() {
        StringBuilder sb = new StringBuilder();
        for (Peer p : allPeers()) {
            Long at = lastAgreement.get(p.endpoint());
            sb.append(sb.length() == 0 ? "" : " ").append(p.endpoint()).append('=')
                    .append(at == null ? "never" : Instant.ofEpochMilli(at).toString());
        }
        return sb.toString();
    }

    @Override
    public long getDifferingKeys() {
        return differingKeys;
    }

    private List<Peer> allPeers() {
        LinkedHashSet<Peer> out = new LinkedHashSet<>();
        for (String name : caches.replicatedCaches()) {
            out.addAll(comparedPeers(name));
        }
        return new ArrayList<>(out);
    }

    /**
     * The peers holding {@code cacheName} that anti-entropy compares with: not stock nodes, which serve no digests
     * (docs/reliability.md, mixed clusters).
     */
    private List<Peer> comparedPeers(String cacheName) {
        List<Peer> out = new ArrayList<>(peersHolding.apply(cacheName));
        out.removeIf(transport::isStockNode);
        return out;
    }

    /** When every cache was last found equal with {@code endpoint}, wall-clock ms, or {@code null}. */
    Long lastAgreement(String endpoint) {
        return lastAgreement.get(endpoint);
    }

    /**
     * One round with every peer, on the calling thread.
     *
     * @param report whether to log the result at INFO (an operator's check) rather than only what was repaired
     * @return per peer endpoint, how many keys differed (both ways) in the leaves compared
     */
    Map<String, Long> round(boolean report) {
        long started = roundsStarted.incrementAndGet();
        Map<String, Long> differing = new LinkedHashMap<>();
        Map<String, Boolean> agreed = new HashMap<>();
        for (String name : caches.replicatedCaches()) {
            Ehcache cache = caches.resolve(name);
            CacheBinding binding = cache == null ? null : caches.bind(name);
            if (binding == null) {
                continue;
            }
            sweep(binding, cache);
            for (Peer peer : comparedPeers(name)) {
                if (!running.getAsBoolean()) {
                    return differing;
                }
                long found;
                try {
                    found = compare(peer, cache, binding);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return differing;
                } catch (Exception e) {
                    if (!running.getAsBoolean()) {
                        return differing; // this node stopped while the round asked (its channel closed): no failure
                    }
                    if (StateTransfer.lacksCache(e)) {
                        // still adding its caches (it joined before its CacheManager made them), or never has it:
                        // nothing to compare with, and nothing failed; the next round asks again
                        LOG.debug("ehrelay: anti-entropy of cache {} of CacheManager {}: {} does not hold it now",
                                name, cacheManagerName, peer);
                        continue;
                    }
                    if (!comparedPeers(name).contains(peer)) {
                        // it left (or announced it leaves) while the round asked it: nothing to compare any more
                        LOG.debug("ehrelay: anti-entropy of cache {} of CacheManager {}: {} left during the round ({})",
                                name, cacheManagerName, peer, SendRound.describe(e));
                        continue;
                    }
                    metrics.meter(MetricNames.ANTI_ENTROPY_FAILURES).mark();
                    warn.warn("ae:" + peer.endpoint(), "ehrelay: anti-entropy of cache {} of CacheManager {} with {} "
                            + "failed (counted in antiEntropyFailures): {}", name, cacheManagerName, peer,
                            SendRound.describe(e));
                    agreed.put(peer.endpoint(), false);
                    differing.merge(peer.endpoint(), -1L, (a, b) -> a < 0 ? a : b);
                    continue;
                }
                if (found != 0) {
                    agreed.put(peer.endpoint(), false);
                } else {
                    agreed.putIfAbsent(peer.endpoint(), true);
                }
                differing.merge(peer.endpoint(), found, (a, b) -> a < 0 ? a : a + b);
            }
        }
        long now = clock.currentTimeMillis();
        for (Map.Entry<String, Boolean> e : agreed.entrySet()) {
            if (e.getValue()) {
                lastAgreement.put(e.getKey(), now);
            }
        }
        metrics.meter(MetricNames.ANTI_ENTROPY_ROUNDS).mark();
        long total = 0;
        for (long n : differing.values()) {
            total += Math.max(0, n);
        }
        synchronized (this) {
            // an operator's check and a background round may overlap: the one that started last tells
            if (started > publishedRound) {
                publishedRound = started;
                differingKeys = total;
            }
        }
        if (report) {
            LOG.info("ehrelay: anti-entropy check of CacheManager {}: keys differing per peer {} (-1: the check "
                    + "failed)", cacheManagerName, differing);
        }
        return differing;
    }

    private void sweep(CacheBinding binding, Ehcache cache) {
        int size;
        try {
            size = cache.getSize();
        } catch (RuntimeException e) {
            size = 0;
        }
        binding.versions.sweep(ordering.horizon(), config.maxTombstones(), key -> isHeld(cache, key), size);
    }

    /** Drops tombstones past their retention and ghosts beyond the bound, in every cache (no comparison). */
    private void sweepAll() {
        for (String name : caches.replicatedCaches()) {
            Ehcache cache = caches.resolve(name);
            CacheBinding binding = cache == null ? null : caches.bound(name);
            if (binding != null) {
                sweep(binding, cache);
            }
        }
    }

    private static boolean isHeld(Ehcache cache, Object key) {
        try {
            return cache.isKeyInCache(key);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Compares one cache with one peer and pulls its newer writes; returns the keys that differed. */
    private long compare(Peer peer, Ehcache cache, CacheBinding binding) throws Exception {
        String name = cache.getName();
        CacheMetrics m = binding.metrics;
        m.onAntiEntropyRound();
        byte[] digest = fetchOne(peer, AntiEntropyServer.DIGEST + name);
        ByteBuffer in = ByteBuffer.wrap(digest);
        if (digest.length != 1 + 16 + 4 + 8 * VersionTable.LEAVES || in.get() != AntiEntropyServer.DIGEST_FORMAT
                || in.getInt(17) != VersionTable.LEAVES) {
            throw new MalformedFrameException("anti-entropy digest of " + digest.length + " bytes from " + peer);
        }
        long clearedStamp = in.getLong();
        long clearedOrigin = in.getLong();
        in.getInt();
        long differing = 0;
        if (clearedStamp != 0) {
            Version theirs = new Version(clearedStamp, clearedOrigin, 0, 0, true);
            if (theirs.newerThan(binding.versions.cleared())) {
                ReplicationEvent clear = ReplicationEvent.removeAll(name).stamped(clearedStamp, clearedOrigin, 0, 0);
                if (ordering.apply(binding, cache, clear) == VersionTable.Outcome.APPLIED) {
                    m.onRepaired(1);
                    repaired.incrementAndGet();
                    differing++;
                }
            }
        }
        long[] mine = binding.versions.leaves();
        List<Integer> different = new ArrayList<>();
        for (int i = 0; i < VersionTable.LEAVES; i++) {
            if (in.getLong() != mine[i]) {
                different.add(i);
            }
        }
        if (different.isEmpty()) {
            return differing;
        }
        m.onRangesDifferent(different.size());
        boolean[] differ = new boolean[VersionTable.LEAVES];
        for (int leaf : different) {
            differ[leaf] = true;
        }
        // a bounded share of them, from a random leaf on: the others are taken by the next rounds
        boolean[] leafSet = binding.versions.boundedLeaves(differ, ThreadLocalRandom.current().nextInt(
                VersionTable.LEAVES), keysPerRound(config.antiEntropyMaxBytes()));
        boolean allAsked = Arrays.equals(leafSet, differ);
        // first the peer's versions only (no values): under steady writes leaves differ by writes in flight, and
        // the values of the equal entries beside them need not travel; then the entries of the leaves that hold
        // a newer settled write. A peer that does not know the request (an older ehrelay) gets the entries at once.
        Pull pull = null;
        Long refused = versionsRefused.get(peer.endpoint());
        boolean askVersions = refused == null || clock.currentTimeMillis() - refused > VERSIONS_RETRY_MILLIS;
        if (askVersions) {
            try {
                pull = pull(peer, AntiEntropyServer.VERSIONS, leafSet, cache, binding, false);
                versionsRefused.remove(peer.endpoint());
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                pull = null; // tried again below with the entries: a failure of both is the round's
            }
        }
        if (pull == null) {
            pull = pull(peer, AntiEntropyServer.ENTRIES, leafSet, cache, binding, true);
            if (askVersions) {
                versionsRefused.put(peer.endpoint(), clock.currentTimeMillis());
            }
        } else if (pull.needLeaves != null) {
            pull.repaired = pull(peer, AntiEntropyServer.ENTRIES, pull.needLeaves, cache, binding, true).repaired;
        }
        m.onRepaired(pull.repaired);
        repaired.addAndGet(pull.repaired);
        differing += pull.differing;
        if (differing == 0 && !(pull.whole && allAsked)) {
            differing = 1; // the digests differ in leaves this round did not reach: at least one key does
        }
        if (pull.repaired > 0) {
            warn.warn("ae-repaired:" + name, "ehrelay: anti-entropy repaired {} keys of cache {} of CacheManager {} "
                    + "from {} ({} leaves of {} differed; counted in keysRepaired)", pull.repaired, name,
                    cacheManagerName, peer, different.size(), VersionTable.LEAVES);
        }
        return differing;
    }

    /** What one request of a round found. */
    private static final class Pull {
        /** keys that differ (both ways) in the leaves asked */
        long differing;
        /** keys repaired */
        long repaired;
        /** whether the peer answered for every leaf asked (it did not stop at its byte or key bound) */
        boolean whole;
        /** leaves with a write of the peer's that is newer and settled, whose entries are to be fetched; null: none */
        boolean[] needLeaves;
    }

    /**
     * Asks {@code peer} for its {@code request} ({@link AntiEntropyServer#ENTRIES} or
     * {@link AntiEntropyServer#VERSIONS}) of {@code leafSet}, and compares each with this node's version: with
     * {@code apply}, keeps each newer write at least one interval old.
     */
    private Pull pull(Peer peer, String kind, boolean[] leafSet, Ehcache cache, CacheBinding binding, boolean apply)
            throws Exception {
        String name = cache.getName();
        long maxBytes = config.antiEntropyMaxBytes();
        long maxKeys = keysPerRound(maxBytes);
        Map<Object, Version> local = new HashMap<>();
        for (Map.Entry<Object, Version> e : binding.versions.entries(leafSet)) {
            local.put(e.getKey(), e.getValue());
        }
        Pull out = new Pull();
        long[] received = new long[2]; // bytes, entries
        boolean[] leavesSent = new boolean[VersionTable.LEAVES];
        String request = kind + maxBytes + "\u0000" + bitmap(leafSet) + "\u0000" + name;
        Throwable failure = SendRound.await(request(peer, request, chunk -> {
            received[0] += chunk.length;
            DecodedBatch batch = StateTransfer.decodeChunk(chunk, limits, metrics);
            for (ReplicationEvent ev : batch.events()) {
                if (!ev.cacheName().equals(name) || ev.op() == Op.REMOVE_ALL) {
                    throw new MalformedFrameException("anti-entropy entries hold " + ev);
                }
                received[1]++;
                int leaf = VersionTable.leafOf(ev.keyHash());
                leavesSent[leaf] = true;
                if (ev.key() == null || ev.stamp() == 0) {
                    continue; // a key this node cannot decode (counted by the codec's rejection), or not stamped
                }
                Version theirs = new Version(ev.stamp(), ev.origin(), ev.keyHash(),
                        ev.op() == Op.REMOVE ? 0 : ev.valueHash(), ev.op() == Op.REMOVE);
                Version ours = local.remove(ev.key());
                if (ours != null && ours.compareTo(theirs) == 0) {
                    continue;
                }
                out.differing++;
                // a write younger than one interval may still be on its way here live: left to the next round
                boolean settled = clock.currentTimeMillis() - Hlc.millisOf(theirs.stamp) >= periodMillis();
                if (!settled || !theirs.newerThan(ours)) {
                    continue;
                }
                if (!apply) {
                    if (out.needLeaves == null) {
                        out.needLeaves = new boolean[VersionTable.LEAVES];
                    }
                    out.needLeaves[leaf] = true;
                    continue;
                }
                try {
                    if (ordering.apply(binding, cache, batch.rejectionOf(ev) != null
                            ? ReplicationEvent.ofKey(Op.INVALIDATE, name, ev.key()).stamped(ev.stamp(),
                                    ev.origin(), ev.valueHash(), ev.keyHash()) : ev)
                            == VersionTable.Outcome.APPLIED) {
                        out.repaired++;
                    }
                } catch (RuntimeException e) {
                    try {
                        cache.remove(ev.key(), true);
                    } catch (RuntimeException ignored) {
                        // the key keeps its version; the next round tries again
                    }
                }
            }
        }), REQUEST_TIMEOUT_MILLIS);
        if (failure != null) {
            throw failure instanceof Exception ? (Exception) failure : new RuntimeException(failure);
        }
        // keys of those leaves this node knows and the peer sent nothing for: the peer lacks them (its own round
        // pulls them), unless they are settled tombstones. When the peer may have stopped early (its byte or key
        // bound), only in the leaves it sent entries of.
        out.whole = received[0] < maxBytes && received[1] < maxKeys;
        for (Version v : local.values()) {
            if ((out.whole || leavesSent[VersionTable.leafOf(v.keyHash)])
                    && (!v.removed || v.stamp >= ordering.horizon())) {
                out.differing++;
            }
        }
        return out;
    }

    /**
     * Most versions one round lists of the asking node's table for a bound of {@code maxBytes} per round (the
     * serving node lists at most twice as many): one per 128 bytes, so that entries of 128 bytes and more fill the
     * byte bound, and the memory a round takes follows the bound, not the cache (under steady writes every leaf
     * differs, and a round listed every key on both sides: with 200,000 keys, 55 MB and 0.5 s of CPU per round
     * against 27 MB and 0.2 s, {@code AntiEntropyCostBench}). Smaller entries take more rounds.
     */
    static long keysPerRound(long maxBytes) {
        return Math.max(1024, maxBytes / 128);
    }

    /**
     * How often a round (or, with anti-entropy off, a sweep of tombstones) runs: the interval, else 10 s. Also how
     * old a peer's write must be before a round takes it (so a write only the peer holds is taken within two
     * periods), so that anti-entropy does not race replication with writes still queued or in flight.
     */
    private long periodMillis() {
        long interval = config.antiEntropyIntervalMillis();
        return interval > 0 ? interval : 10_000;
    }

    private byte[] fetchOne(Peer peer, String request) throws Exception {
        List<byte[]> chunks = new ArrayList<>(1);
        Throwable failure = SendRound.await(request(peer, request, chunks::add), REQUEST_TIMEOUT_MILLIS);
        if (failure != null) {
            throw failure instanceof Exception ? (Exception) failure : new RuntimeException(failure);
        }
        if (chunks.size() != 1) {
            throw new MalformedFrameException(chunks.size() + " chunks for an anti-entropy digest from " + peer);
        }
        return chunks.get(0);
    }

    private CompletableFuture<Void> request(Peer peer, String request, InboundHandler.ChunkSink sink) {
        try {
            return transport.requestState(peer, request, 1 << 20, chunk -> {
                bytesFetched.addAndGet(chunk.length);
                sink.accept(chunk);
            });
        } catch (RuntimeException e) {
            return Futures.failed(e);
        }
    }

    private static String bitmap(boolean[] leaves) {
        StringBuilder sb = new StringBuilder(leaves.length / 4);
        for (int i = 0; i < leaves.length; i += 4) {
            int nibble = (leaves[i] ? 8 : 0) | (leaves[i + 1] ? 4 : 0) | (leaves[i + 2] ? 2 : 0) | (leaves[i + 3] ? 1 : 0);
            sb.append(Character.forDigit(nibble, 16));
        }
        return sb.toString();
    }

}
