package io.ehrelay.internal.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

import io.ehrelay.internal.metrics.ReplicationMetrics;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Status;
import net.sf.ehcache.event.CacheEventListener;

/**
 * Which caches of the CacheManager replicate through the node, and how to find a live one by name. A cache is
 * replicated when one of its listeners is a replicator of this node's scheme (told by a predicate the provider
 * layer supplies, so the engine does not depend on it). Binding a cache gives it a {@link CacheBinding}: its
 * metrics and its queue lane. Thread-safe.
 */
final class CacheBindings {

    private final CacheManager cacheManager;
    private final ReplicationMetrics metrics;
    private final Predicate<CacheEventListener> isReplicator;
    private final Map<String, CacheBinding> bindings = new ConcurrentHashMap<>();
    /** Caches whose bootstrap runs during CacheManager start-up, before the CacheManager lists them. */
    private final Map<String, Ehcache> initializing = new ConcurrentHashMap<>();
    private volatile boolean scannedCaches;
    private volatile int lanes = 1;

    CacheBindings(CacheManager cacheManager, ReplicationMetrics metrics, Predicate<CacheEventListener> isReplicator) {
        this.cacheManager = cacheManager;
        this.metrics = metrics;
        this.isReplicator = isReplicator;
    }

    /** The number of queue lanes caches are spread over (set once the node is configured). */
    void setLanes(int laneCount) {
        this.lanes = laneCount;
    }

    /**
     * The cache's binding, created on first use. The first call also binds every other replicated cache, so
     * operators see all their metrics at once.
     */
    CacheBinding bind(String cacheName) {
        CacheBinding b = bindings.get(cacheName);
        if (b != null) {
            return b;
        }
        b = bindings.computeIfAbsent(cacheName, n -> new CacheBinding(n, metrics.cache(n),
                (n.hashCode() & 0x7fffffff) % lanes));
        if (!scannedCaches) {
            scannedCaches = true;
            for (String name : cacheManager.getCacheNames()) {
                if (isReplicated(name)) {
                    bind(name);
                }
            }
        }
        return b;
    }

    /** Every binding so far. */
    Collection<CacheBinding> all() {
        return bindings.values();
    }

    CacheBinding bound(String cacheName) {
        return bindings.get(cacheName);
    }

    /** Whether the named cache exists and one of its listeners replicates through this node. */
    boolean isReplicated(String cacheName) {
        Ehcache cache;
        try {
            cache = cacheManager.getEhcache(cacheName);
        } catch (IllegalStateException e) {
            return false;
        }
        if (cache == null) {
            return false;
        }
        for (Object listener : cache.getCacheEventNotificationService().getCacheEventListeners()) {
            if (listener instanceof CacheEventListener && isReplicator.test((CacheEventListener) listener)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The caches this node replicates: bound ones, and those whose replicator has not sent anything yet (a
     * cache is bound on its first event when no listener factory announced it).
     */
    List<String> replicatedCaches() {
        Set<String> names = new LinkedHashSet<>(bindings.keySet());
        String[] all;
        try {
            all = cacheManager.getCacheNames();
        } catch (IllegalStateException e) {
            return new ArrayList<>(names);
        }
        for (String name : all) {
            if (!names.contains(name) && isReplicated(name)) {
                names.add(name);
            }
        }
        return new ArrayList<>(names);
    }

    /**
     * The caches this node replicates now: live ones and those bootstrapping during start-up, without the ones
     * removed since (whose bindings, and metrics, stay).
     */
    List<String> liveReplicatedCaches() {
        Set<String> names = new LinkedHashSet<>(replicatedCaches());
        names.addAll(initializing.keySet());
        List<String> out = new ArrayList<>(names.size());
        for (String name : names) {
            if (resolve(name) != null) {
                out.add(name);
            }
        }
        return out;
    }

    /** A cache is bootstrapping during CacheManager start-up: events and state requests may address it. */
    void initializing(Ehcache cache) {
        initializing.put(cache.getName(), cache);
    }

    /**
     * Whether {@code name} is a cache of the CacheManager's configuration (so a node that lacks it live is still
     * adding it: its CacheManager is being constructed).
     */
    boolean configured(String name) {
        try {
            return cacheManager.getConfiguration().getCacheConfigurations().containsKey(name);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** A live cache of this CacheManager, including one still bootstrapping during start-up, or {@code null}. */
    Ehcache resolve(String name) {
        Ehcache cache;
        try {
            cache = cacheManager.getEhcache(name);
        } catch (IllegalStateException e) {
            return null;
        }
        if (cache != null) {
            if (!initializing.isEmpty()) {
                initializing.remove(name);
            }
            return cache.getStatus() == Status.STATUS_ALIVE ? cache : null;
        }
        cache = initializing.get(name);
        return cache != null && cache.getStatus() == Status.STATUS_ALIVE ? cache : null;
    }
}
