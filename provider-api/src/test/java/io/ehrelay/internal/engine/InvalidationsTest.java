package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collections;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.internal.codec.AllowList;
import io.ehrelay.internal.codec.Rejection;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.testing.LogCapture;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.constructs.EhcacheDecoratorAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What a node does with an event it cannot apply: its key goes, counted and said; nothing else does. */
class InvalidationsTest {

    private final EngineTestKit kit = new EngineTestKit();
    private final Invalidations invalidations = new Invalidations(kit.metrics,
            AllowList.withDefaults(Collections.emptyList()), kit.warn);

    @AfterEach
    void close() {
        kit.close();
    }

    private static Rejection refused(String cache, Object key, String className) {
        return new Rejection(cache, Op.PUT, ReplicationEvent.ofKey(Op.INVALIDATE, cache, key),
                new RejectedClassException(className, "not admitted: " + className));
    }

    @Test
    void aRefusedClass_isCountedOnItsCache_andSaidOncePerClassWithTheSettingThatAdmitsIt() {
        try (LogCapture log = LogCapture.start()) {
            invalidations.undecodable("peer-1", refused("a", "k1", "com.example.Secret"), true);
            invalidations.undecodable("peer-1", refused("a", "k2", "com.example.Secret"), true);
            invalidations.undecodable("peer-1", refused("b", "k3", "com.example.Secret"), true);

            CacheMetrics a = kit.metrics.cache("a");
            assertThat(a.rejectedCount()).isEqualTo(2);
            assertThat(a.invalidatedCount()).isEqualTo(2);
            assertThat(kit.metrics.cache("b").invalidatedCount()).isEqualTo(1);
            assertThat(log.lines("set on every node's cacheManagerPeerProviderFactory"))
                    .as("one WARN per class and cache, naming the setting").hasSize(2)
                    .allMatch(l -> l.contains("com.example.Secret") && l.contains("allowedClasses="));
            assertThat(log.lines("removed its key k2 here instead"))
                    .as("the second event of the class and cache reaches the rate-limited log").hasSize(1);
        }
    }

    @Test
    void anEventWhoseKeyDidNotDecode_isNotCountedAsAnInvalidatedKey_andSaysNothingElseWasRemoved() {
        try (LogCapture log = LogCapture.start()) {
            Rejection r = new Rejection("a", null,
                    ReplicationEvent.ofKey(Op.INVALIDATE, "a", null), new MalformedFrameException("truncated key"));
            invalidations.undecodable("peer-2", r, true);

            assertThat(kit.metrics.cache("a").invalidatedCount()).isZero();
            assertThat(kit.metrics.cache("a").rejectedCount()).as("not the allow-list").isZero();
            assertThat(log.lines("not even the key could be decoded; nothing else")).hasSize(1)
                    .allMatch(l -> l.contains("truncated key"));
        }
    }

    @Test
    void aRefusedClassOfAnUnknownCache_countsOnlyOnTheNode() {
        invalidations.undecodable("peer-3", refused("gone", "k", "com.example.Secret"), false);

        assertThat(kit.metrics.meter("rejected").getCount()).isEqualTo(1);
        assertThat(kit.metrics.cache("gone").invalidatedCount()).isZero();
    }

    @Test
    void distinctClassesSaidOnce_areBounded() {
        try (LogCapture log = LogCapture.start()) {
            for (int i = 0; i < Invalidations.MAX_DISTINCT + 10; i++) {
                invalidations.undecodable("peer-4", refused("a", "k" + i, "com.example.C" + i), true);
            }
            assertThat(log.lines("set on every node's cacheManagerPeerProviderFactory"))
                    .hasSize(Invalidations.MAX_DISTINCT);
            assertThat(kit.metrics.cache("a").rejectedCount()).as("every one counted")
                    .isEqualTo(Invalidations.MAX_DISTINCT + 10);
        }
    }

    @Test
    void aDecodedEventTheCacheRefuses_removesOnlyItsKey() {
        Ehcache a = kit.cacheManager.getEhcache("a");
        a.put(new Element("k", "old"));
        a.put(new Element("other", "kept"));
        CacheMetrics m = kit.metrics.cache("a");
        ReplicationEvent ev = ReplicationEvent.put("a", new Element("k", "new"));

        invalidations.applyFailed("peer-5", a, m, ev, new IllegalStateException("store full"));

        assertThat(a.get("k")).as("neither the old nor the new value is served").isNull();
        assertThat(a.get("other").getObjectValue()).isEqualTo("kept");
        assertThat(m.applyFailedCount()).isEqualTo(1);
        assertThat(m.invalidatedCount()).isEqualTo(1);
    }

    @Test
    void aCacheThatRefusesTheRemovalToo_isCleared_andSaysSo() {
        Ehcache real = kit.cacheManager.getEhcache("a");
        real.put(new Element("k", "old"));
        real.put(new Element("other", "x"));
        Ehcache refusing = new EhcacheDecoratorAdapter(real) {
            @Override
            public boolean remove(Object key, boolean doNotNotifyCacheReplicators) {
                throw new IllegalStateException("remove refused");
            }
        };
        CacheMetrics m = kit.metrics.cache("a");
        try (LogCapture log = LogCapture.start()) {
            invalidations.applyFailed("peer-6", refusing, m,
                    ReplicationEvent.put("a", new Element("k", "new")), new IllegalStateException("put refused"));

            assertThat(real.getSize()).as("nothing it may no longer hold is served").isZero();
            assertThat(log.lines("so every element was removed here")).hasSize(1);
        }
    }
}
