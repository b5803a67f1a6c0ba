package io.ehrelay.internal.engine;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
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
 *
 * <p>The versions are kept in {@value #STRIPES} chained hash tables, one per lock stripe, chosen by the key's
 * {@code hashCode} (like a map, equal keys are one key whatever their encoding); each version is its own chain
 * entry ({@link Version#key}, {@link Version#next}), so a key costs one object, not a version and a map node.
 * Every access to a stripe's table holds its lock. The leaves, keyed by the hash of the key's encoded bytes (what
 * every node computes alike), are updated atomically, since keys of one leaf may lie in different stripes.
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

    /** Smallest length of a stripe's table (a power of two); it doubles past three quarters full. */
    private static final int MIN_TABLE = 4;

    /** Per stripe, its chained hash table of versions (null until its first key); under the stripe's lock. */
    private final Version[][] tables = new Version[STRIPES][];
    /** Per stripe, how many versions its table holds; written under the stripe's lock. */
    private final int[] counts = new int[STRIPES];
    /** XOR of the digests of each leaf's versions. */
    private final AtomicLongArray leaves = new AtomicLongArray(LEAVES);
    /** How many versions each leaf holds. */
    private final AtomicIntegerArray leafCounts = new AtomicIntegerArray(LEAVES);
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

    /**
     * The key's {@code hashCode}, its high bits folded in: its stripe is bits 8 to 15, its bucket the others, so
     * that keys whose hashes follow each other (numbered keys) fill one stripe's table in order, as they would one
     * map's: a run of puts then writes into few cards of the tables, not into every stripe's.
     */
    private static int spread(Object key) {
        int h = key.hashCode();
        return h ^ (h >>> 16);
    }

    private static int stripeOf(int spread) {
        return (spread >>> 8) & (STRIPES - 1);
    }

    private static int bucketOf(int spread, int length) {
        return ((spread >>> 16) << 8 | (spread & 0xff)) & (length - 1);
    }

    Version get(Object key) {
        int h = spread(key);
        ReentrantLock lock = stripes[stripeOf(h)];
        lock.lock();
        try {
            return find(key, h);
        } finally {
            lock.unlock();
        }
    }

    // ---- the stripes' tables: every method below holds the key's stripe lock -----------------------------------

    private Version find(Object key, int h) {
        Version[] tab = tables[stripeOf(h)];
        if (tab == null) {
            return null;
        }
        for (Version n = tab[bucketOf(h, tab.length)]; n != null; n = n.next) {
            if (n.key == key || key.equals(n.key)) {
                return n;
            }
        }
        return null;
    }

    /**
     * Makes {@code v} the key's version in place of {@code cur} (what {@link #find} gave, or null), and returns what
     * was stored: {@code v} itself, or a copy of it when it is some table's entry already (a version object is one
     * key's entry in one table).
     */
    private Version store(Object key, int h, Version cur, Version v) {
        if (v == cur) {
            return v;
        }
        if (v.key != null) {
            v = new Version(v.stamp, v.origin, v.keyHash, v.valueHash, v.removed);
        }
        int stripe = stripeOf(h);
        Version[] tab = tables[stripe];
        if (tab == null) {
            tab = new Version[MIN_TABLE];
            tables[stripe] = tab;
        }
        int b = bucketOf(h, tab.length);
        v.key = key;
        if (cur == null) {
            v.next = tab[b];
            tab[b] = v;
            if (++counts[stripe] > tab.length - (tab.length >>> 2)) {
                grow(stripe);
            }
            return v;
        }
        v.next = cur.next;
        relink(tab, b, cur, v);
        return v;
    }

    /** Takes {@code cur} (what {@link #find} gave for the key) out of its table. */
    private void unlink(int h, Version cur) {
        int stripe = stripeOf(h);
        Version[] tab = tables[stripe];
        relink(tab, bucketOf(h, tab.length), cur, cur.next);
        counts[stripe]--;
    }

    /** Links {@code with} where bucket {@code b}'s chain links {@code cur}, and detaches {@code cur}. */
    private static void relink(Version[] tab, int b, Version cur, Version with) {
        if (tab[b] == cur) {
            tab[b] = with;
        } else {
            Version p = tab[b];
            while (p.next != cur) {
                p = p.next;
            }
            p.next = with;
        }
        cur.next = null;
        cur.key = null;
    }

    private void grow(int stripe) {
        Version[] old = tables[stripe];
        Version[] tab = new Version[old.length << 1];
        for (Version head : old) {
            Version n = head;
            while (n != null) {
                Version next = n.next;
                int b = bucketOf(spread(n.key), tab.length);
                n.next = tab[b];
                tab[b] = n;
                n = next;
            }
        }
        tables[stripe] = tab;
    }

    /** Gives every key and version to {@code each}, one stripe at a time under its lock (a weakly consistent view). */
    private void forEach(BiConsumer<Object, Version> each) {
        for (int stripe = 0; stripe < STRIPES; stripe++) {
            ReentrantLock l = stripes[stripe];
            l.lock();
            try {
                Version[] tab = tables[stripe];
                if (tab == null) {
                    continue;
                }
                for (Version head : tab) {
                    for (Version n = head; n != null; n = n.next) {
                        each.accept(n.key, n);
                    }
                }
            } finally {
                l.unlock();
            }
        }
    }

    private static void xor(AtomicLongArray a, int i, long delta) {
        long prev;
        do {
            prev = a.get(i);
        } while (!a.compareAndSet(i, prev, prev ^ delta));
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
        int h = spread(key);
        int stripe = stripeOf(h);
        ReentrantLock lock = stripes[stripe];
        lock.lock();
        try {
            Version cur = find(key, h);
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
                if (refused == Outcome.SAME && fillIfAbsent != null && !v.removed
                        && fillIfAbsent.fill(store, key, event)) {
                    lastRemoteMillis[stripe] = EHCACHE_TIME.currentTimeMillis();
                    return Outcome.APPLIED;
                }
                return refused;
            }
            // recorded before the cache is written, as the key's newest write while the cache takes it
            account(cur, store(key, h, cur, v), v.keyHash);
            try {
                storeWrite.write(store, key, event);
            } finally {
                lastRemoteMillis[stripe] = EHCACHE_TIME.currentTimeMillis();
            }
            return Outcome.APPLIED;
        } finally {
            lock.unlock();
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
        int h = spread(key);
        int stripe = stripeOf(h);
        ReentrantLock lock = stripes[stripe];
        lock.lock();
        try {
            Version v = pendingHash && !removed ? Version.pendingPut(hlc.next(), self, keyHash)
                    : new Version(hlc.next(), self, keyHash, valueHash, removed);
            Version cur = find(key, h);
            long since = writtenAtMillis - 1;
            boolean mayBeSuperseded = removed || writtenAtMillis <= 0 || lastRemoteMillis[stripe] >= since
                    || cur != null && Hlc.millisOf(cur.stamp) >= since;
            if (mayBeSuperseded) {
                int held = check.held(store, key, written);
                if (held == SUPERSEDED) {
                    return null;
                }
                if (held == ABSENT && (valueHash != 0 || v.pending())) {
                    v = new Version(v.stamp, self, keyHash, 0, false);
                }
            }
            account(cur, store(key, h, cur, v), keyHash);
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
        int h = spread(key);
        ReentrantLock lock = stripes[stripeOf(h)];
        lock.lock();
        try {
            if (!v.pending()) {
                return;
            }
            long before = v.digest();
            v.settle(valueHash);
            if (v.key != null) { // the table still holds it (a replaced version has no key)
                xor(leaves, leafOf(v.keyHash), before ^ v.digest());
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
                Version kv = find(key, spread(key));
                if (kv == null || v.newerThan(kv)) {
                    dropFromStore.accept(key);
                }
            }
            for (Map.Entry<Object, Version> e : all()) {
                if (v.newerThan(e.getValue())) {
                    drop(e.getKey(), e.getValue());
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
            for (Map.Entry<Object, Version> e : all()) {
                drop(e.getKey(), e.getValue());
            }
        } finally {
            for (int i = stripes.length - 1; i >= 0; i--) {
                stripes[i].unlock();
            }
        }
    }

    /** Every key and version, listed (a weakly consistent view, exact while every stripe lock is held). */
    private List<Map.Entry<Object, Version>> all() {
        List<Map.Entry<Object, Version>> out = new ArrayList<>();
        forEach((key, v) -> out.add(new AbstractMap.SimpleImmutableEntry<>(key, v)));
        return out;
    }

    /** The counts and the leaf of a version replaced in the table ({@code null}s: none); caller holds the lock. */
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
        if (delta != 0) {
            xor(leaves, leaf, delta);
        }
        if (count != 0) {
            leafCounts.addAndGet(leaf, count);
        }
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
            int n = leafCounts.get(leaf); // read while writes go on: a bound, not an account
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
        for (int leaf = 0; leaf < LEAVES; leaf++) {
            out[leaf] = leaves.get(leaf);
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
        forEach((key, v) -> {
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
        forEach((key, v) -> {
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

    /** The keys this table holds a version of (listed one stripe at a time: a weakly consistent view). */
    List<Object> keys() {
        List<Object> out = new ArrayList<>();
        forEach((key, v) -> out.add(key));
        return out;
    }

    /** How many versions the table holds (the stripes' counts, read while writes go on). */
    int size() {
        int n = 0;
        for (int stripe = 0; stripe < STRIPES; stripe++) {
            n += counts[stripe];
        }
        return n;
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
        List<Map.Entry<Object, Version>> expired = new ArrayList<>();
        // versions beyond the keys held are tombstones or ghosts: only when they may exceed the bound is each
        // key looked up in the cache
        boolean lookUp = size() - Math.max(0, heldCount) > max;
        // no entry object per version on every round: only the tombstones to drop are listed
        forEach((key, v) -> {
            if (v.removed && v.stamp < horizon) {
                expired.add(new AbstractMap.SimpleImmutableEntry<>(key, v));
            } else if (v.removed || lookUp && !held.test(key)) {
                spare.add(key);
                spareStamps.add(v.stamp);
            }
        });
        for (Map.Entry<Object, Version> e : expired) {
            dropped[0] += drop(e.getKey(), e.getValue());
        }
        if (spare.size() > max) {
            long[] stamps = new long[spareStamps.size()];
            for (int i = 0; i < stamps.length; i++) {
                stamps[i] = spareStamps.get(i);
            }
            Arrays.sort(stamps);
            long below = stamps[spare.size() - max];
            for (Object key : spare) {
                Version v = get(key);
                if (v != null && v.stamp < below && (v.removed || !held.test(key))) {
                    dropped[0] += drop(key, v);
                }
            }
        }
        return dropped[0];
    }

    /** Drops {@code key}'s version if it is still {@code v}; returns 1 if it did. */
    private int drop(Object key, Version v) {
        int h = spread(key);
        ReentrantLock lock = stripes[stripeOf(h)];
        lock.lock();
        try {
            if (find(key, h) != v) {
                return 0;
            }
            unlink(h, v);
            account(v, null, v.keyHash);
            return 1;
        } finally {
            lock.unlock();
        }
    }
}
