package io.ehrelay.internal.engine;

import java.util.concurrent.ThreadFactory;

import net.sf.ehcache.CacheManager;

/**
 * Stops a node whose CacheManager failed to construct after the node started (Ehcache then forgets the
 * CacheManager without disposing it, and the node's threads and port would stay): one thread waits for the
 * CacheManager's monitor, held by its constructor, and stops the node if the CacheManager is not in
 * {@code CacheManager.ALL_CACHE_MANAGERS}. How and why: docs/architecture.md, "Lifecycle, as Ehcache runs it".
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
