package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.testing.ManualClock;
import org.junit.jupiter.api.Test;

/**
 * The order of writes as a model: the same stamped writes applied in every order give one state — the same
 * cache content, the same versions and the same digest leaves — and that state is the newest write of each key.
 */
class VersionTableTest {

    private static final long SELF = 1;

    /** A write of the model: a put (value), a remove, an invalidation, or a removeAll (key null). */
    private static final class Write {
        final String key;
        final String value;
        final Version version;
        final boolean invalidate;

        Write(String key, String value, Version version, boolean invalidate) {
            this.key = key;
            this.value = value;
            this.version = version;
            this.invalidate = invalidate;
        }

        @Override
        public String toString() {
            return (key == null ? "removeAll" : key) + "=" + value + " " + version + (invalidate ? " (inv)" : "");
        }
    }

    private static int hash(String s) {
        return s == null ? 0 : s.hashCode() | 1;
    }

    /** Applies {@code writes} in order to a fresh table and a map standing for the cache. */
    private static Object[] applyAll(List<Write> writes) {
        VersionTable t = new VersionTable();
        Map<String, String> store = new TreeMap<>();
        for (Write w : writes) {
            if (w.key == null) {
                t.clear(w.version, new ArrayList<>(store.keySet()), k -> store.remove(k));
            } else {
                t.offer(w.key, w.version, SELF, 0, () -> {
                    if (w.value == null) {
                        store.remove(w.key);
                    } else {
                        store.put(w.key, w.value);
                    }
                });
            }
        }
        return new Object[] {store, Arrays.toString(t.leaves()), String.valueOf(t.cleared()), t.size()};
    }

    private static List<Write> randomWrites(Random r) {
        List<Write> writes = new ArrayList<>();
        Set<Long> used = new HashSet<>();
        int n = 3 + r.nextInt(10);
        for (int i = 0; i < n; i++) {
            long stamp;
            long origin;
            do {
                stamp = 1 + r.nextInt(6); // few stamps: ties between nodes are the rule, not the exception
                origin = 1 + r.nextInt(3);
            } while (!used.add(stamp * 10 + origin)); // a node never issues one stamp twice
            int kind = r.nextInt(10);
            String key = "k" + r.nextInt(3);
            if (kind == 0) {
                writes.add(new Write(null, null, new Version(stamp, origin, 0, 0, true), false));
            } else if (kind <= 2) {
                writes.add(new Write(key, null, new Version(stamp, origin, hash(key), 0, true), false));
            } else if (kind == 3) {
                writes.add(new Write(key, null, new Version(stamp, origin, hash(key), 77, false), true));
            } else {
                String value = "v" + stamp + "/" + origin;
                writes.add(new Write(key, value, new Version(stamp, origin, hash(key), hash(value), false), false));
            }
        }
        return writes;
    }

    /** The oracle: each key holds the value of its newest write, unless a newer remove, invalidation or removeAll. */
    private static Map<String, String> expected(List<Write> writes) {
        Map<String, String> out = new TreeMap<>();
        for (String key : new String[] {"k0", "k1", "k2"}) {
            Write newest = null;
            for (Write w : writes) {
                if ((w.key == null || w.key.equals(key)) && (newest == null || w.version.newerThan(newest.version))) {
                    newest = w;
                }
            }
            if (newest != null && newest.key != null && newest.value != null) {
                out.put(key, newest.value);
            }
        }
        return out;
    }

    @Test
    void theSameStampedWrites_inEveryOrder_giveOneState_theNewestWriteOfEachKey() {
        long seed = System.nanoTime();
        Random r = new Random(seed);
        for (int round = 0; round < 400; round++) {
            List<Write> writes = randomWrites(r);
            Object[] first = applyAll(writes);
            assertThat(first[0]).as("seed %d, writes %s", seed, writes).isEqualTo(expected(writes));
            for (int p = 0; p < 20; p++) {
                List<Write> shuffled = new ArrayList<>(writes);
                Collections.shuffle(shuffled, r);
                assertThat(applyAll(shuffled)).as("seed %d, writes %s in the order %s", seed, writes, shuffled)
                        .isEqualTo(first);
            }
        }
    }

    @Test
    void theSameWrite_fillsTheCacheOnlyWhenItLacksTheValue_andNeverForARemove() {
        VersionTable t = new VersionTable();
        Version put = new Version(10, 2, 5, 6, false);
        AtomicInteger fills = new AtomicInteger();
        // first heard of as an invalidation (the version without its value): nothing stored
        assertThat(t.offer("k", put, SELF, 0, () -> { })).isEqualTo(VersionTable.Outcome.APPLIED);
        // the same write with its value, while the cache lacks it: stored, and counted as applied
        assertThat(t.offer("k", put, SELF, 0, () -> { }, () -> fills.incrementAndGet() > 0))
                .isEqualTo(VersionTable.Outcome.APPLIED);
        assertThat(fills).hasValue(1);
        // the cache holds it now: the same again is the same
        assertThat(t.offer("k", put, SELF, 0, () -> { }, () -> false)).isEqualTo(VersionTable.Outcome.SAME);
        // a remove never fills; an older put is stale and asks nothing
        Version removed = new Version(20, 2, 5, 0, true);
        assertThat(t.offer("k", removed, SELF, 0, () -> { })).isEqualTo(VersionTable.Outcome.APPLIED);
        assertThat(t.offer("k", removed, SELF, 0, () -> { }, () -> fills.incrementAndGet() > 0))
                .isEqualTo(VersionTable.Outcome.SAME);
        assertThat(t.offer("k", put, SELF, 0, () -> { }, () -> fills.incrementAndGet() > 0))
                .isEqualTo(VersionTable.Outcome.STALE);
        assertThat(fills).hasValue(1);
    }

    @Test
    void aWriteAppliedTwice_isTheSame_andAnOlderOneAgainstALocalWrite_isALocalWin() {
        VersionTable t = new VersionTable();
        Version remote = new Version(10, 2, 5, 6, false);
        assertThat(t.offer("k", remote, SELF, 0, () -> { })).isEqualTo(VersionTable.Outcome.APPLIED);
        assertThat(t.offer("k", remote, SELF, 0, () -> { })).isEqualTo(VersionTable.Outcome.SAME);
        assertThat(t.offer("k", new Version(9, 3, 5, 7, false), SELF, 0, () -> { }))
                .isEqualTo(VersionTable.Outcome.STALE);
        Hlc hlc = new Hlc(new ManualClock());
        hlc.observe(10);
        Version local = t.local("k", 5, 8, false, hlc, SELF, () -> true);
        assertThat(local.stamp).as("after what it saw").isGreaterThan(10);
        assertThat(t.offer("k", new Version(10, 9, 5, 7, false), SELF, 0, () -> { }))
                .isEqualTo(VersionTable.Outcome.LOCAL_WON);
        assertThat(t.local("k", 5, 9, false, hlc, SELF, () -> false)).as("superseded in the cache").isNull();
    }

    /**
     * A local put whose value the dispatcher hashes is pending until then: its leaf differs from a settled copy's,
     * it is never served, and once settled the leaf is exactly that of the settled write. Settling a version the
     * key no longer holds (a newer write replaced it meanwhile) leaves the leaves alone.
     */
    @Test
    void aPendingPut_isSettledToTheDigestOfTheSameWrite_andAReplacedOneChangesNothing() {
        VersionTable t = new VersionTable();
        Hlc hlc = new Hlc(new ManualClock());
        Version pending = t.local("k", 5, 0, false, true, hlc, SELF, 0, (s, k, w) -> VersionTable.CURRENT, null,
                null);
        assertThat(pending.pending()).isTrue();
        int leaf = VersionTable.leafOf(5);
        Version settledCopy = new Version(pending.stamp, pending.origin, 5, 77, false);
        assertThat(t.leaves()[leaf]).as("pending: not the settled write's digest").isNotEqualTo(settledCopy.digest());
        t.settle("k", pending, 77);
        assertThat(pending.pending()).isFalse();
        assertThat(pending.valueHash).isEqualTo(77);
        assertThat(t.leaves()[leaf]).isEqualTo(settledCopy.digest());
        t.settle("k", pending, 99);
        assertThat(pending.valueHash).as("settled once").isEqualTo(77);

        Version first = t.local("k", 5, 0, false, true, hlc, SELF, 0, (s, k, w) -> VersionTable.CURRENT, null, null);
        Version second = t.local("k", 5, 31, false, hlc, SELF, () -> true);
        long before = t.leaves()[leaf];
        t.settle("k", first, 12);
        assertThat(t.leaves()[leaf]).as("the replaced version counts nowhere").isEqualTo(before)
                .isEqualTo(second.digest());
        Version absent = t.local("gone", 5, 0, false, true, hlc, SELF, 0, (s, k, w) -> VersionTable.ABSENT, null,
                null);
        assertThat(absent.pending()).as("the cache no longer holds it: a settled version without value").isFalse();
        assertThat(absent.valueHash).isZero();
    }

    @Test
    void digests_areEqualExactlyWhenTheVersionsAre_includingSameStampDifferentValue() {
        VersionTable a = new VersionTable();
        VersionTable b = new VersionTable();
        for (int i = 0; i < 1000; i++) {
            Version v = new Version(100 + i, 7, ("k" + i).hashCode(), i, false);
            a.offer("k" + i, v, SELF, 0, () -> { });
            b.offer("k" + i, v, SELF, 0, () -> { });
        }
        assertThat(a.leaves()).isEqualTo(b.leaves());
        int k = ("k5").hashCode();
        b.offer("k5", new Version(105, 7, k, 999, false), SELF, 0, () -> { }); // same stamp, another value: newer
        long[] la = a.leaves();
        long[] lb = b.leaves();
        int differing = 0;
        for (int i = 0; i < la.length; i++) {
            if (la[i] != lb[i]) {
                differing++;
                assertThat(i).isEqualTo(VersionTable.leafOf(k));
            }
        }
        assertThat(differing).isEqualTo(1);
    }

    @Test
    void tombstones_pastTheRetention_areDropped_andNotRecordedAgain() {
        VersionTable t = new VersionTable();
        t.offer("old", new Version(10, 2, 1, 0, true), SELF, 0, () -> { });
        t.offer("new", new Version(50, 2, 2, 0, true), SELF, 0, () -> { });
        t.offer("held", new Version(5, 2, 3, 4, false), SELF, 0, () -> { });
        assertThat(t.tombstones()).isEqualTo(2);
        assertThat(t.sweep(20, 100, key -> key.equals("held"), 1)).isEqualTo(1);
        assertThat(t.tombstones()).isEqualTo(1);
        assertThat(t.get("held")).as("an element still held keeps its version").isNotNull();
        assertThat(t.offer("old", new Version(10, 2, 1, 0, true), SELF, 20, () -> { }))
                .as("a tombstone older than the horizon is not recorded anew").isEqualTo(VersionTable.Outcome.STALE);
        assertThat(t.get("old")).isNull();
    }

    @Test
    void boundedLeaves_takeARunOfLeavesFromTheFirst_byTheVersionsEachHolds_followingEveryWrite() {
        VersionTable t = new VersionTable();
        // a key hash below 65,536 is its own leaf's number plus a multiple of 1,024
        int[][] perLeaf = {{5, 3}, {6, 1}, {7, 4}, {1000, 2}};
        for (int[] leaf : perLeaf) {
            for (int j = 0; j < leaf[1]; j++) {
                int keyHash = leaf[0] + 1024 * j;
                assertThat(VersionTable.leafOf(keyHash)).isEqualTo(leaf[0]);
                t.offer("k" + keyHash, new Version(100 + keyHash, 2, keyHash, 0, j == 0 && leaf[0] == 5), SELF, 0,
                        () -> { });
            }
        }
        boolean[] set = new boolean[VersionTable.LEAVES];
        for (int leaf : new int[] {5, 6, 7, 8, 1000}) {
            set[leaf] = true;
        }
        assertThat(leavesOf(t.boundedLeaves(set, 5, 4))).as("3 + 1 fit, 4 more do not").containsExactly(5, 6);
        assertThat(leavesOf(t.boundedLeaves(set, 5, 3))).containsExactly(5);
        assertThat(leavesOf(t.boundedLeaves(set, 7, 1))).as("the first leaf always").containsExactly(7);
        assertThat(leavesOf(t.boundedLeaves(set, 900, 100))).as("wrapping around").containsExactly(5, 6, 7, 8, 1000);
        assertThat(leavesOf(t.boundedLeaves(set, 6, 100))).as("only leaves of the set").containsExactly(5, 6, 7, 8,
                1000);
        // the tombstone of leaf 5 expires: 2 + 1 fit in 3
        assertThat(t.sweep(1000, 100, key -> true, 10)).isEqualTo(1);
        assertThat(leavesOf(t.boundedLeaves(set, 5, 3))).containsExactly(5, 6);
        // a removeAll newer than every write empties every leaf
        t.clear(new Version(1_000_000, 3, 0, 0, true), Collections.emptyList(), key -> { });
        assertThat(leavesOf(t.boundedLeaves(set, 5, 0))).containsExactly(5, 6, 7, 8, 1000);
    }

    private static List<Integer> leavesOf(boolean[] leaves) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < leaves.length; i++) {
            if (leaves[i]) {
                out.add(i);
            }
        }
        return out;
    }

    @Test
    void tombstonesAndGhosts_beyondTheBound_goOldestFirst() {
        VersionTable t = new VersionTable();
        for (int i = 1; i <= 100; i++) {
            t.offer("k" + i, new Version(i, 2, i, 0, i % 2 == 0), SELF, 0, () -> { });
        }
        // odd keys: versions of keys the cache does not hold (ghosts); even: tombstones
        t.sweep(0, 40, key -> false, 0);
        assertThat(t.size()).isEqualTo(40);
        assertThat(t.get("k100")).isNotNull();
        assertThat(t.get("k1")).isNull();
        Map<Object, Version> left = new HashMap<>();
        for (Object key : t.keys()) {
            left.put(key, t.get(key));
        }
        assertThat(left.values()).allMatch(v -> v.stamp > 60);
    }

    /** A key whose hashCode the test picks: few distinct ones make every key of the table collide. */
    private static final class Key {
        final int id;
        final int hash;

        Key(int id, int hash) {
            this.id = id;
            this.hash = hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).id == id;
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public String toString() {
            return "key" + id + "#" + hash;
        }
    }

    @Test
    void theTable_agreesWithAMapModel_throughGrowthRemovalsSweepsAndClears_evenWhenEveryKeyCollides() {
        long seed = System.nanoTime();
        for (int hashes : new int[] {1, 3, 1 << 20}) {
            Random r = new Random(seed + hashes);
            VersionTable t = new VersionTable();
            Map<Key, Version> model = new HashMap<>();
            Version cleared = null;
            long stamp = 1000;
            Hlc hlc = new Hlc(new ManualClock()); // stays at 0 ms: stamps follow what it saw
            for (int step = 0; step < 20_000; step++) {
                int id = r.nextInt(3000);
                Key key = new Key(id, id % hashes);
                int op = r.nextInt(100);
                if (op < 70) {
                    // a remote write, sometimes older than what the key holds
                    long st = stamp + r.nextInt(200) - 100;
                    Version v = new Version(st, 2 + r.nextInt(3), key.id * 31, r.nextInt(5), r.nextInt(4) == 0);
                    Version cur = model.get(key);
                    boolean newer = v.newerThan(cur) && v.newerThan(cleared);
                    VersionTable.Outcome o = t.offer(key, v, SELF, 0, () -> { });
                    assertThat(o == VersionTable.Outcome.APPLIED).as("seed %d step %d: %s %s over %s (table: %s), cleared %s", seed, step, key, v, cur, t.get(key), cleared)
                            .isEqualTo(newer);
                    if (newer) {
                        model.put(key, v);
                    }
                } else if (op < 90) {
                    Version v = t.local(key, key.id * 31, r.nextInt(5), r.nextInt(3) == 0, hlc, SELF,
                            () -> true);
                    assertThat(v).isNotNull();
                    model.put(key, v);
                } else if (op < 99) {
                    long horizon = stamp - r.nextInt(300);
                    t.sweep(horizon, Integer.MAX_VALUE, k -> true, 0);
                    model.values().removeIf(v -> v.removed && v.stamp < horizon);
                } else {
                    Version v = new Version(stamp - r.nextInt(100), 9, 0, 0, true);
                    if (v.newerThan(cleared)) {
                        cleared = v;
                        Version c = v;
                        model.values().removeIf(x -> c.newerThan(x));
                    }
                    t.clear(v, Collections.emptyList(), k -> { });
                }
                stamp += r.nextInt(3);
                hlc.observe(stamp - 50);
            }
            assertThat(t.size()).as("seed %d, %d hashes", seed, hashes).isEqualTo(model.size());
            long[] leaves = new long[VersionTable.LEAVES];
            int tombs = 0;
            for (Map.Entry<Key, Version> e : model.entrySet()) {
                Version held = t.get(e.getKey());
                assertThat(held).as("seed %d: %s", seed, e.getKey()).isNotNull();
                assertThat(held.compareTo(e.getValue())).as("seed %d: %s", seed, e.getKey()).isZero();
                leaves[VersionTable.leafOf(e.getValue().keyHash)] ^= e.getValue().digest();
                tombs += e.getValue().removed ? 1 : 0;
            }
            assertThat(t.leaves()).as("seed %d", seed).isEqualTo(leaves);
            assertThat(t.tombstones()).as("seed %d", seed).isEqualTo(tombs);
            assertThat(new HashSet<>(t.keys())).isEqualTo(model.keySet());
        }
    }

    @Test
    void writersOnManyThreads_leaveOneVersionPerKey_theNewest_andLeavesAndCountsThatAddUp() throws Exception {
        VersionTable t = new VersionTable();
        Hlc hlc = new Hlc(new ManualClock());
        int threads = 4;
        int keys = 5000;
        // every thread writes every key, remotely and locally, growing the tables while the others write
        ConcurrentHashMap<Key, Version> newest = new ConcurrentHashMap<>();
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Thread> running = new ArrayList<>();
        List<Throwable> failed = Collections.synchronizedList(new ArrayList<>());
        for (int n = 0; n < threads; n++) {
            int self = n;
            Thread th = new Thread(() -> {
                try {
                    Random r = new Random(self);
                    start.await();
                    for (int i = 0; i < 4 * keys; i++) {
                        int id = r.nextInt(keys);
                        Key key = new Key(id, id % 97);
                        Version v;
                        if (r.nextBoolean()) {
                            v = new Version(hlc.next(), 10 + self, id * 31, r.nextInt(5), r.nextInt(5) == 0);
                            t.offer(key, v, SELF, 0, () -> { });
                        } else {
                            v = t.local(key, id * 31, 1 + r.nextInt(5), false, hlc, SELF, () -> true);
                        }
                        newest.merge(key, v, (a, b) -> a.newerThan(b) ? a : b);
                    }
                } catch (Exception e) {
                    failed.add(e);
                }
            });
            th.start();
            running.add(th);
        }
        for (Thread th : running) {
            th.join();
        }
        assertThat(failed).isEmpty();
        assertThat(t.size()).isEqualTo(newest.size());
        long[] leaves = new long[VersionTable.LEAVES];
        int tombs = 0;
        for (Map.Entry<Key, Version> e : newest.entrySet()) {
            Version held = t.get(e.getKey());
            assertThat(held).as("%s", e.getKey()).isNotNull();
            assertThat(held.compareTo(e.getValue())).as("%s: %s, newest %s", e.getKey(), held, e.getValue())
                    .isZero();
            leaves[VersionTable.leafOf(held.keyHash)] ^= held.digest();
            tombs += held.removed ? 1 : 0;
        }
        assertThat(t.leaves()).isEqualTo(leaves);
        assertThat(t.tombstones()).isEqualTo(tombs);
        assertThat(new HashSet<>(t.keys())).isEqualTo(newest.keySet());
    }
}
