package io.ehrelay.internal.engine;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Predicate;

import io.ehrelay.spi.Clock;

/**
 * One cache's order of writes: for each key the newest write this node knows ({@link Version}) — while the key
 * is held, as a tombstone after a remove, as a ghost after an invalidation — applied by compare-and-write under
 * the key's lock ({@link #offer}), and summed into {@value #LEAVES} XOR leaves for anti-entropy. Tombstones and
 * ghosts are bounded by retention and {@code maxTombstones}, oldest first. The design: docs/reliability.md, "One
 * order per key" and "Missed events". Thread-safe.
 */
final class VersionTable {

    static final int LEAVES = 1024;
    static final int STRIPES = 256;
    /**
     * The clock Ehcache stamps an element's lastUpdateTime with (the JVM's wall clock, whatever the node's
     * {@link Clock}): what {@link #local} compares those stamps with.
     */
    static final Clock EHCACHE_TIME = Clock.SYSTEM;

    /** What the cache holds of an application's write when it is stamped: see {@link #local}. */
    static final int CURRENT = 0;
    static final int ABSENT = 1;
    static final int SUPERSEDED = 2;

    private final ConcurrentHashMap<Object, Version> versions = new ConcurrentHashMap<>(1024);
    /** XOR of the digests of each leaf's versions; written under the leaf's stripe lock. */
    private final long[] leaves = new long[LEAVES];
    /** How many versions each leaf holds; written under the leaf's stripe lock. */
    private final int[] leafCounts = new int[LEAVES];
    /**
     * Per stripe, when a remote write was last applied there ({@link #EHCACHE_TIME}, as Ehcache stamps an
     * element's lastUpdateTime; written under the stripe's lock, after the cache write).
     */
    private final long[] lastRemoteMillis = new long[STRIPES];
    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];
    private final AtomicInteger tombstones = new AtomicInteger();
    private volatile Version cleared;
    /** scans by {@link #keysWithHashes} */
    private final AtomicLong scans = new AtomicLong();

    VersionTable() {
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    /** What became of a remote write. */
    enum Outcome {
        /** newer than what the key held: written */
        APPLIED,
        /** the key already holds this very write */
        SAME,
        /** older than this node's own newer write of the key: the local write won */
        LOCAL_WON,
        /** older than another node's write the key holds, or than a removeAll: discarded */
        STALE
    }

    static int leafOf(int keyHash) {
        int h = keyHash ^ (keyHash >>> 16);
        return h & (LEAVES - 1);
    }

    private static int stripeOf(int keyHash) {
        return leafOf(keyHash) & (STRIPES - 1);
    }

    private ReentrantLock lockOf(int keyHash) {
        return stripes[stripeOf(keyHash)];
    }

    Version get(Object key) {
        return versions.get(key);
    }

    /** The newest removeAll this node applied, or {@code null}. */
    Version cleared() {
        return cleared;
    }

    /**
     * A write from another node (live, bootstrap, resync or repair): when {@code v} is newer than the key's
     * version and than the last removeAll, runs {@code storeWrite} and records {@code v}, all under the key's
     * lock.
     *
     * @param self this node's origin id: an older write against one of its own counts as {@link Outcome#LOCAL_WON}
     * @param horizon stamps below it are past the tombstone retention: such a tombstone is not recorded anew (only
     *                a removal's is looked at)
     * @param storeWrite writes the cache; if it throws, {@code v} is still recorded (the caller removes the key
     *                   from the cache instead, leaving a ghost) and the exception propagates
     */
    Outcome offer(Object key, Version v, long self, long horizon, Runnable storeWrite) {
        return offer(key, v, self, horizon, storeWrite, null);
    }

    /**
     * As above; and when {@code v} is the very write the key's version already records ({@link Outcome#SAME}),
     * a put, {@code fillIfAbsent} (if given) runs under the key's lock: it stores the value when the cache lacks
     * it (a node that only heard of the write, or lost the element, and now receives its value) and says whether
     * it did, which counts as {@link Outcome#APPLIED}.
     */
    Outcome offer(Object key, Version v, long self, long horizon, Runnable storeWrite,
                  BooleanSupplier fillIfAbsent) {
        return offer(key, v, self, horizon, (write, k, fill) -> write.run(),
                fillIfAbsent == null ? null : (write, k, fill) -> fill.getAsBoolean(), storeWrite, fillIfAbsent);
    }

    /** Writes a remote write into the cache ({@code store}), given the key and the write ({@code event}). */
    interface StoreWrite<S, E> {
        void write(S store, Object key, E event);
    }

    /** Stores a remote put's value if the cache lacks the key, and says whether it did. */
    interface StoreFill<S, E> {
        boolean fill(S store, Object key, E event);
    }

    /**
     * As above, with the cache's writes as functions of the cache, the key and the write ({@code store},
     * {@code event}) passed apart: one instance of each serves every event, so applying one allocates none.
     * {@code fillIfAbsent} may be {@code null}.
     */
    <S, E> Outcome offer(Object key, Version v, long self, long horizon, StoreWrite<S, E> storeWrite,
                         StoreFill<S, E> fillIfAbsent, S store, E event) {
        int stripe = stripeOf(v.keyHash);
        ReentrantLock lock = stripes[stripe];
        lock.lock();
        try {
            // one map operation in the usual case (the write is newer): put first, put back if it is not
            Version cur = versions.put(key, v);
            Outcome refused = null;
            if (cur != null && !v.newerThan(cur)) {
                refused = cur.compareTo(v) == 0 ? Outcome.SAME : cur.origin == self ? Outcome.LOCAL_WON : Outcome.STALE;
            } else {
                Version c = cleared;
                if (c != null && !v.newerThan(c) || cur == null && v.removed && v.stamp < horizon) {
                    refused = Outcome.STALE;
                }
            }
            if (refused != null) {
                restore(key, cur);
                if (refused == Outcome.SAME && fillIfAbsent != null && !v.removed
                        && fillIfAbsent.fill(store, key, event)) {
                    lastRemoteMillis[stripe] = EHCACHE_TIME.currentTimeMillis();
                    return Outcome.APPLIED;
                }
                return refused;
            }
            try {
                storeWrite.write(store, key, event);
            } finally {
                account(cur, v, v.keyHash);
                lastRemoteMillis[stripe] = EHCACHE_TIME.currentTimeMillis();
            }
            return Outcome.APPLIED;
        } finally {
            lock.unlock();
        }
    }

    private void restore(Object key, Version previous) {
        if (previous == null) {
            versions.remove(key);
        } else {
            versions.put(key, previous);
        }
    }

    /**
     * A write of this node's application, already in the cache: stamps and records it, under the key's lock,
     * unless {@code stillCurrent} says the cache no longer holds what the application wrote (a remote write
     * replaced it before this node was told: that write, already recorded, is then the newer one).
     *
     * @return the recorded version, or {@code null} when superseded
     */
    Version local(Object key, int keyHash, int valueHash, boolean removed, Hlc hlc, long self,
                  BooleanSupplier stillCurrent) {
        return local(key, keyHash, valueHash, removed, false, hlc, self, 0,
                (s, k, w) -> s.getAsBoolean() ? CURRENT : SUPERSEDED, stillCurrent, null);
    }

    /**
     * Asks the cache what it holds of a local write ({@link #CURRENT}, {@link #ABSENT} or {@link #SUPERSEDED}),
     * given the cache (or what stands for it), the key and what was written: passed apart so that one instance
     * serves every write and a put allocates no check.
     */
    interface StoreCheck<S, W> {
        int held(S store, Object key, W written);
    }

    /**
     * As above; {@code writtenAtMillis} is when the cache took the write (the element's lastUpdateTime, 0 when
     * unknown). The cache is asked ({@code check}) only when another write of the key may have come after it: a
     * remote write applied in the key's stripe, a clear, or a version of the key recorded, since that millisecond;
     * otherwise nothing was written after it but by writers whose own stamping comes later and checks.
     * {@code check} (given {@code store}, the key and {@code written}) answers {@link #CURRENT} (the cache holds
     * the write), {@link #SUPERSEDED} (it holds another write of the key, recorded or about to be: nothing is
     * recorded, {@code null} returned) or {@link #ABSENT}
     * (the key was removed meanwhile — by a removeAll, a remove, or eviction: the write is recorded as a version
     * without value, {@code valueHash} 0, and the caller replicates an invalidation, so that no node holds what
     * this one does not). With {@code pendingHash}, a put is recorded {@linkplain Version#pendingPut pending}
     * ({@code valueHash} ignored) and the caller has it {@linkplain #settle settled} when the value is hashed.
     */
    <S, W> Version local(Object key, int keyHash, int valueHash, boolean removed, boolean pendingHash, Hlc hlc,
                         long self, long writtenAtMillis, StoreCheck<S, W> check, S store, W written) {
        int stripe = stripeOf(keyHash);
        ReentrantLock lock = stripes[stripe];
        lock.lock();
        try {
            Version v = pendingHash && !removed ? Version.pendingPut(hlc.next(), self, keyHash)
                    : new Version(hlc.next(), self, keyHash, valueHash, removed);
            Version cur = versions.put(key, v); // put back below in the rare case the write was superseded
            long since = writtenAtMillis - 1;
            boolean mayBeSuperseded = removed || writtenAtMillis <= 0 || lastRemoteMillis[stripe] >= since
                    || cur != null && Hlc.millisOf(cur.stamp) >= since;
            if (mayBeSuperseded) {
                int held = check.held(store, key, written);
                if (held == SUPERSEDED) {
                    restore(key, cur);
                    return null;
                }
                if (held == ABSENT && (valueHash != 0 || v.pending())) {
                    v = new Version(v.stamp, self, keyHash, 0, false);
                    versions.put(key, v);
                }
            }
            account(cur, v, keyHash);
            return v;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Gives a {@linkplain Version#pending() pending} version of {@code key} its value hash (or 0: a version
     * without value, served as an invalidation), and its leaf the settled digest while the table still holds it
     * (once replaced, it is no longer counted anywhere). Nothing when it was settled already.
     */
    void settle(Object key, Version v, int valueHash) {
        ReentrantLock lock = stripes[stripeOf(v.keyHash)];
        lock.lock();
        try {
            if (!v.pending()) {
                return;
            }
            long before = v.digest();
            v.settle(valueHash);
            if (versions.get(key) == v) {
                leaves[leafOf(v.keyHash)] ^= before ^ v.digest(); // under the leaf's stripe lock
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * A removeAll stamped {@code v}: when newer than the last one, every key whose version is older loses it and
     * is removed from the cache ({@code dropFromStore}), and writes older than {@code v} are refused from now on.
     * Holds every key lock while it runs.
     *
     * @param storeKeys the keys the cache holds now: those without a version go too
     * @return whether {@code v} was newer than the last removeAll
     */
    boolean clear(Version v, Iterable<?> storeKeys, Consumer<Object> dropFromStore) {
        for (ReentrantLock l : stripes) {
            l.lock();
        }
        try {
            Version c = cleared;
            if (c != null && !v.newerThan(c)) {
                return false;
            }
            cleared = v;
            Arrays.fill(lastRemoteMillis, EHCACHE_TIME.currentTimeMillis());
            for (Object key : storeKeys) {
                Version kv = versions.get(key);
                if (kv == null || v.newerThan(kv)) {
                    dropFromStore.accept(key);
                }
            }
            for (Map.Entry<Object, Version> e : new ArrayList<>(versions.entrySet())) {
                if (v.newerThan(e.getValue())) {
                    record(e.getKey(), e.getValue(), null);
                }
            }
            return true;
        } finally {
            for (int i = stripes.length - 1; i >= 0; i--) {
                stripes[i].unlock();
            }
        }
    }

    /**
     * Forgets every version (the last removeAll stays) and runs {@code clearStore}, holding every key lock: an
     * unordered clear.
     */
    void forget(Runnable clearStore) {
        for (ReentrantLock l : stripes) {
            l.lock();
        }
        try {
            clearStore.run();
            Arrays.fill(lastRemoteMillis, EHCACHE_TIME.currentTimeMillis());
            for (Map.Entry<Object, Version> e : new ArrayList<>(versions.entrySet())) {
                record(e.getKey(), e.getValue(), null);
            }
        } finally {
            for (int i = stripes.length - 1; i >= 0; i--) {
                stripes[i].unlock();
            }
        }
    }

    /** Replaces {@code key}'s version {@code old} by {@code v} ({@code null}: drops it); caller holds its lock. */
    private void record(Object key, Version old, Version v) {
        if (v != null) {
            versions.put(key, v);
        } else {
            versions.remove(key);
        }
        account(old, v, v != null ? v.keyHash : old.keyHash);
    }

    /** The counts and the leaf of a version replaced in the map ({@code null}s: none); caller holds the lock. */
    private void account(Version old, Version v, int keyHash) {
        long delta = 0;
        int count = 0;
        if (old != null) {
            delta ^= old.digest();
            count--;
            if (old.removed) {
                tombstones.decrementAndGet();
            }
        }
        if (v != null) {
            delta ^= v.digest();
            count++;
            if (v.removed) {
                tombstones.incrementAndGet();
            }
        }
        int leaf = leafOf(keyHash);
        leaves[leaf] ^= delta; // under the leaf's stripe lock
        leafCounts[leaf] += count;
    }

    /**
     * Of {@code leafSet}, the leaves from {@code firstLeaf} on (wrapping around) whose versions number at most
     * {@code maxKeys} together, and always the first of them: what one anti-entropy round takes, so that a round
     * lists a bounded share of the table however many leaves differ (under steady writes, all of them).
     */
    boolean[] boundedLeaves(boolean[] leafSet, int firstLeaf, long maxKeys) {
        boolean[] out = new boolean[LEAVES];
        long keys = 0;
        boolean any = false;
        for (int i = 0; i < LEAVES; i++) {
            int leaf = (firstLeaf + i) & (LEAVES - 1);
            if (!leafSet[leaf]) {
                continue;
            }
            int n = leafCounts[leaf]; // a racy read: a bound, not an account
            if (any && keys + n > maxKeys) {
                break;
            }
            out[leaf] = true;
            keys += n;
            any = true;
        }
        return out;
    }

    /** A copy of the leaves. */
    long[] leaves() {
        long[] out = new long[LEAVES];
        for (int stripe = 0; stripe < STRIPES; stripe++) {
            ReentrantLock l = stripes[stripe];
            l.lock();
            try {
                for (int leaf = stripe; leaf < LEAVES; leaf += STRIPES) {
                    out[leaf] = leaves[leaf];
                }
            } finally {
                l.unlock();
            }
        }
        return out;
    }

    /**
     * The keys and versions of the given leaves, leaf by leaf from {@code firstLeaf} on (wrapping around): a
     * reader that stops early (a byte bound) and starts elsewhere next time reaches every leaf.
     */
    List<Map.Entry<Object, Version>> entries(boolean[] leafSet, int firstLeaf) {
        @SuppressWarnings({"unchecked", "rawtypes"})
        List<Map.Entry<Object, Version>>[] byLeaf = new List[LEAVES];
        versions.forEach((key, v) -> {
            int leaf = leafOf(v.keyHash);
            if (leafSet[leaf]) {
                if (byLeaf[leaf] == null) {
                    byLeaf[leaf] = new ArrayList<>(2);
                }
                byLeaf[leaf].add(new AbstractMap.SimpleImmutableEntry<>(key, v));
            }
        });
        List<Map.Entry<Object, Version>> out = new ArrayList<>();
        for (int i = 0; i < LEAVES; i++) {
            List<Map.Entry<Object, Version>> leaf = byLeaf[(firstLeaf + i) & (LEAVES - 1)];
            if (leaf != null) {
                out.addAll(leaf);
            }
        }
        return out;
    }

    /** The keys and versions of the given leaves. */
    List<Map.Entry<Object, Version>> entries(boolean[] leafSet) {
        return entries(leafSet, 0);
    }

    /**
     * The keys whose encoded bytes hash to one of {@code sortedKeyHashes}, by hash (usually one key per hash): one
     * scan of the table for all of them, so that a batch of events whose keys this node cannot read costs one scan,
     * not one per event.
     */
    Map<Integer, List<Object>> keysWithHashes(int[] sortedKeyHashes) {
        scans.incrementAndGet();
        Map<Integer, List<Object>> out = new HashMap<>();
        versions.forEach((key, v) -> {
            if (Arrays.binarySearch(sortedKeyHashes, v.keyHash) >= 0) {
                out.computeIfAbsent(v.keyHash, h -> new ArrayList<>(1)).add(key);
            }
        });
        return out;
    }

    /** How many times {@link #keysWithHashes} scanned the table (for tests). */
    long scans() {
        return scans.get();
    }

    /** The keys this table holds a version of (a weakly consistent view). */
    Set<Object> keys() {
        return versions.keySet();
    }

    int size() {
        return versions.size();
    }

    int tombstones() {
        return tombstones.get();
    }

    /**
     * Drops tombstones whose stamp is below {@code horizon}, and, while tombstones and ghosts (versions of keys the
     * cache does not hold, told by {@code held}) number more than {@code max}, the oldest of them.
     *
     * @return how many versions were dropped
     */
    int sweep(long horizon, int max, Predicate<Object> held, int heldCount) {
        int[] dropped = {0};
        List<Object> spare = new ArrayList<>();
        List<Long> spareStamps = new ArrayList<>();
        // versions beyond the keys held are tombstones or ghosts: only when they may exceed the bound is each
        // key looked up in the cache
        boolean lookUp = versions.size() - Math.max(0, heldCount) > max;
        // forEach, not entrySet(): no entry object per version on every round
        versions.forEach((key, v) -> {
            if (v.removed && v.stamp < horizon) {
                dropped[0] += drop(key, v);
            } else if (v.removed || lookUp && !held.test(key)) {
                spare.add(key);
                spareStamps.add(v.stamp);
            }
        });
        if (spare.size() > max) {
            long[] stamps = new long[spareStamps.size()];
            for (int i = 0; i < stamps.length; i++) {
                stamps[i] = spareStamps.get(i);
            }
            Arrays.sort(stamps);
            long below = stamps[spare.size() - max];
            for (Object key : spare) {
                Version v = versions.get(key);
                if (v != null && v.stamp < below && (v.removed || !held.test(key))) {
                    dropped[0] += drop(key, v);
                }
            }
        }
        return dropped[0];
    }

    private int drop(Object key, Version v) {
        ReentrantLock lock = lockOf(v.keyHash);
        lock.lock();
        try {
            if (versions.get(key) != v) {
                return 0;
            }
            record(key, v, null);
            return 1;
        } finally {
            lock.unlock();
        }
    }
}
