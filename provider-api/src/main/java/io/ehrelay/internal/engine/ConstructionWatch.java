package io.ehrelay.internal.engine;

import java.util.concurrent.ThreadFactory;

import net.sf.ehcache.CacheManager;

/**
 * Stops a node whose CacheManager failed to construct. Ehcache starts the node in the middle of the CacheManager's
 * constructor (the peer provider's {@code init()}, before the caches are created) and disposes it only in
 * {@code CacheManager.shutdown()}. When the constructor fails after the start — a cache's factory class misspelt, a
 * bad property of a cache's replicator — Ehcache forgets the CacheManager without shutting it down, and nothing would
 * stop the node: its threads would run on and its port stay bound, so that a retry in the same JVM could not listen
 * there. The constructor runs under the CacheManager's monitor ({@code CacheManager.init} is {@code synchronized},
 * Ehcache 2.6 to 2.10): one thread waits for that monitor, then stops the node if the CacheManager is not among
 * {@code CacheManager.ALL_CACHE_MANAGERS} any more (which it joins before its peer providers start, and leaves after
 * they were disposed by a shutdown, or when its constructor failed). It ends as soon as the constructor has.
 */
final class ConstructionWatch {

    private ConstructionWatch() {
    }

    /**
     * Starts the watch when the calling thread constructs {@code cacheManager} (holds its monitor).
     *
     * @return the watching thread, or {@code null}: a node started outside a constructor needs none
     */
    static Thread start(CacheManager cacheManager, ThreadFactory threads, Runnable stopNode) {
        if (!Thread.holdsLock(cacheManager)) {
            return null;
        }
        Thread watch = threads.newThread(() -> {
            boolean constructed;
            synchronized (cacheManager) {
                constructed = !orphaned(cacheManager);
            }
            if (!constructed) {
                stopNode.run();
            }
        });
        watch.start();
        return watch;
    }

    /** Whether {@code cacheManager} is gone without a shutdown (or shut down): not among the live ones. */
    static boolean orphaned(CacheManager cacheManager) {
        return !CacheManager.ALL_CACHE_MANAGERS.contains(cacheManager);
    }
}
