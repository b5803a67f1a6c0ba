package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import net.sf.ehcache.Ehcache;
import net.sf.ehcache.event.CacheEventListener;
import net.sf.ehcache.event.CacheEventListenerAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CacheBindingsTest {

    /** Stands for a replicator of this node's scheme. */
    private static final class Marker extends CacheEventListenerAdapter {
    }

    private final EngineTestKit kit = new EngineTestKit();
    private final CacheBindings caches = new CacheBindings(kit.cacheManager, kit.metrics,
            (CacheEventListener l) -> l instanceof Marker);

    @AfterEach
    void close() {
        kit.close();
    }

    @Test
    void aCacheIsReplicated_whenOneOfItsListenersPassesThePredicate() {
        kit.cacheManager.getEhcache("b").getCacheEventNotificationService().registerListener(new Marker());
        assertThat(caches.isReplicated("a")).isFalse();
        assertThat(caches.isReplicated("b")).isTrue();
        assertThat(caches.isReplicated("nosuch")).isFalse();
        assertThat(caches.replicatedCaches()).containsExactly("b");
    }

    @Test
    void theFirstBinding_bindsEveryReplicatedCache_andLanesSpreadCaches() {
        kit.cacheManager.getEhcache("b").getCacheEventNotificationService().registerListener(new Marker());
        caches.setLanes(4);
        CacheBinding a = caches.bind("a");
        assertThat(caches.bound("b")).as("bound with the first").isNotNull();
        assertThat(caches.bind("a")).isSameAs(a);
        assertThat(a.lane).isBetween(0, 3).isEqualTo(("a".hashCode() & 0x7fffffff) % 4);
        assertThat(caches.replicatedCaches()).containsExactlyInAnyOrder("a", "b");
    }

    @Test
    void resolve_findsLiveCaches_andOnesStillBootstrapping() {
        assertThat(caches.resolve("a")).isNotNull();
        assertThat(caches.resolve("nosuch")).isNull();
        kit.cacheManager.removeCache("b");
        assertThat(caches.resolve("b")).as("removed").isNull();
        try (EngineTestKit other = new EngineTestKit()) {
            // a cache whose bootstrap runs while its CacheManager starts: not listed by the CacheManager yet
            Ehcache starting = other.cacheManager.getEhcache("b");
            caches.initializing(starting);
            assertThat(caches.resolve("b")).isSameAs(starting);
        }
        assertThat(caches.resolve("b")).as("disposed").isNull();
    }
}
