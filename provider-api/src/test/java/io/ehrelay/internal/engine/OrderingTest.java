package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.testing.CacheKeys;
import io.ehrelay.testing.LogCapture;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Ordering} on a real cache: stamping local writes, applying remote ones, and both at once. */
@Timeout(120)
class OrderingTest {

    private final EngineTestKit kit = new EngineTestKit();
    private final Ordering ordering = new Ordering(Clock.SYSTEM, 600_000, kit.warn);
    private final CacheBinding binding = new CacheBindings(kit.cacheManager, kit.metrics, l -> false).bind("a");
    private final Ehcache cache = kit.cacheManager.getEhcache("a");

    /** A stamp {@code millis} after this test began (recent: tombstones are kept). */
    private final long base = System.currentTimeMillis();

    private long at(long millis) {
        return Hlc.stampAt(base + millis);
    }

    @AfterEach
    void close() {
        kit.close();
    }

    private static ReplicationEvent remotePut(String key, String value, long stamp, long origin) throws Exception {
        ReplicationEvent ev = ReplicationEvent.put("a", new Element(key, value));
        return ev.stamped(stamp, origin, EventCodec.hashOf(value), EventCodec.hashOf(key));
    }

    @Test
    void aRemoteWriteOlderThanTheLocalOne_isDiscarded_andCountedAsALocalWin() throws Exception {
        Element mine = new Element("k", "mine");
        cache.put(mine, true);
        Version v = ordering.localPut(binding, cache, "k", mine, EventCodec.hashOf("k"), EventCodec.hashOf("mine"));
        assertThat(ordering.apply(binding, cache, remotePut("k", "theirs", v.stamp - 1, 42)))
                .isEqualTo(VersionTable.Outcome.LOCAL_WON);
        assertThat(cache.get("k").getObjectValue()).isEqualTo("mine");
        assertThat(ordering.apply(binding, cache, remotePut("k", "newer", v.stamp + 1, 42)))
                .isEqualTo(VersionTable.Outcome.APPLIED);
        assertThat(cache.get("k").getObjectValue()).isEqualTo("newer");
        assertThat(ordering.apply(binding, cache, remotePut("k", "late", v.stamp, 43)))
                .isEqualTo(VersionTable.Outcome.STALE);
        assertThat(kit.metrics.cache("a").meterCount("conflictsLocalWon")).isEqualTo(1);
        assertThat(kit.metrics.cache("a").meterCount("staleDiscarded")).isEqualTo(1);
    }

    @Test
    void aRemoveLeavesATombstone_soAnOlderPutDoesNotResurrectTheKey() throws Exception {
        ordering.apply(binding, cache, ReplicationEvent.ofKey(Op.REMOVE, "a", "k")
                .stamped(at(1000), 9, 0, EventCodec.hashOf("k")));
        assertThat(ordering.apply(binding, cache, remotePut("k", "old", at(999), 8)))
                .isEqualTo(VersionTable.Outcome.STALE);
        assertThat(cache.get("k")).isNull();
        assertThat(binding.versions.tombstones()).isEqualTo(1);
    }

    @Test
    void aWriteOlderThanTheLastRemoveAll_isDiscarded_andNewerKeysSurviveIt() throws Exception {
        ordering.apply(binding, cache, remotePut("young", "y", at(3000), 8));
        ordering.apply(binding, cache, remotePut("old", "o", at(1000), 8));
        ordering.apply(binding, cache, ReplicationEvent.removeAll("a").stamped(at(2000), 9, 0, 0));
        assertThat(CacheKeys.of(cache)).containsExactly("young");
        assertThat(ordering.apply(binding, cache, remotePut("late", "l", at(1500), 7)))
                .isEqualTo(VersionTable.Outcome.STALE);
        assertThat(cache.get("late")).isNull();
    }

    @Test
    void aPutWhoseKeyWasRemovedBeforeItWasStamped_isRecordedWithoutItsValue_soPeersDropTheKeyToo()
            throws Exception {
        Element e = new Element("k", "v");
        cache.put(e, true);
        cache.remove("k", true); // another thread's remove (or a removeAll) came in between
        ordering.localRemove(binding, cache, "k", EventCodec.hashOf("k"));
        Version v = ordering.localPut(binding, cache, "k", e, EventCodec.hashOf("k"), EventCodec.hashOf("v"));
        assertThat(v.removed).isFalse();
        assertThat(v.valueHash).as("a version without value: the put is replicated as an invalidation").isZero();
        assertThat(binding.versions.get("k")).isSameAs(v);
    }

    /**
     * The application's put lands in the cache before ehrelay is told; a remote write of the same key may land in
     * between. Whatever the interleaving, the cache must end holding what the key's version says — else this
     * node would keep a value its peers never get (or replicate one it does not hold).
     */
    @Test
    void aLocalWriteAndARemoteApply_atOnce_leaveTheCacheHoldingWhatTheVersionSays() throws Exception {
        Hlc remoteClock = new Hlc(Clock.SYSTEM);
        int rounds = 20_000;
        CountDownLatch start = new CountDownLatch(1);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread app = new Thread(() -> {
            try {
                start.await();
                for (int i = 0; i < rounds; i++) {
                    Element e = new Element("k", "local" + i);
                    cache.put(e, true); // the application's write ...
                    ordering.localPut(binding, cache, "k", e, EventCodec.hashOf("k"),
                            EventCodec.hashOf("local" + i)); // ... and ehrelay told after it
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        Thread remote = new Thread(() -> {
            try {
                start.await();
                for (int i = 0; i < rounds; i++) {
                    ordering.apply(binding, cache, remotePut("k", "remote" + i, remoteClock.next(), 42));
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        });
        app.start();
        remote.start();
        start.countDown();
        app.join();
        remote.join();
        assertThat(failure.get()).isNull();
        Version v = binding.versions.get("k");
        Object held = cache.get("k").getObjectValue();
        assertThat(EventCodec.hashOf(held)).as("the cache holds %s, the version says %s", held, v)
                .isEqualTo(v.valueHash);
        assertThat(kit.metrics.cache("a").meterCount("localWritesSuperseded")
                + kit.metrics.cache("a").meterCount("conflictsLocalWon")).as("the two writers met").isPositive();
    }

    @Test
    void onlyARemovalIsHeldToTheTombstoneRetention_aPutOrInvalidationAsOldIsApplied() throws Exception {
        long pastRetention = at(-700_000); // the ordering keeps tombstones 600 s
        assertThat(ordering.apply(binding, cache, ReplicationEvent.ofKey(Op.REMOVE, "a", "gone")
                .stamped(pastRetention, 9, 0, EventCodec.hashOf("gone"))))
                .as("a tombstone older than the retention is not recorded anew").isEqualTo(VersionTable.Outcome.STALE);
        assertThat(binding.versions.get("gone")).isNull();
        assertThat(ordering.apply(binding, cache, remotePut("p", "v", pastRetention, 9)))
                .isEqualTo(VersionTable.Outcome.APPLIED);
        assertThat(cache.get("p").getObjectValue()).isEqualTo("v");
        cache.put(new Element("i", "held"), true);
        assertThat(ordering.apply(binding, cache, ReplicationEvent.ofKey(Op.INVALIDATE, "a", "i")
                .stamped(pastRetention, 9, 0, EventCodec.hashOf("i")))).isEqualTo(VersionTable.Outcome.APPLIED);
        assertThat(cache.get("i")).isNull();
        assertThat(binding.versions.get("i")).as("a ghost").isNotNull();
    }

    @Test
    void aStampFarAheadOfThisNodesClock_isAppliedAndWarnedOf_andLocalWritesAreOrderedAfterIt() throws Exception {
        long ahead = at(120_000);
        try (LogCapture log = LogCapture.start()) {
            assertThat(ordering.apply(binding, cache, remotePut("k", "future", ahead, 9)))
                    .isEqualTo(VersionTable.Outcome.APPLIED);
            // more of that writer's stamps within its millisecond: nothing new to check, and still applied
            assertThat(ordering.apply(binding, cache, remotePut("k2", "future", ahead + 1, 9)))
                    .isEqualTo(VersionTable.Outcome.APPLIED);
            assertThat(log.lines("s ahead of this node's clock")).as("warned of the skew").hasSize(1);
            assertThat(log.lines("s ahead of this node's clock").get(0)).containsPattern(" 1[12][09] s ahead");
        }
        Element mine = new Element("k", "mine");
        cache.put(mine, true);
        Version v = ordering.localPut(binding, cache, "k", mine, EventCodec.hashOf("k"), EventCodec.hashOf("mine"));
        assertThat(v.stamp).as("ordered after the stamp it saw").isGreaterThan(ahead + 1);
    }
}
