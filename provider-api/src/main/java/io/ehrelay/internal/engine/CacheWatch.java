package io.ehrelay.internal.engine;

import java.util.function.BooleanSupplier;

import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Status;
import net.sf.ehcache.event.CacheManagerEventListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows a started node's CacheManager as caches are added and removed, with or without a peer listener (JGroups
 * has none): a replicated cache added is bound and served by the transport, and the peers learn it holds it; one
 * removed is no longer served, and the peers stop sending it. Thread-safe.
 */
final class CacheWatch implements CacheManagerEventListener {

    private static final Logger LOG = LoggerFactory.getLogger(CacheWatch.class);

    private final CacheManager cacheManager;
    private final CacheBindings caches;
    private final Transport transport;
    private final Membership membership;
    private final BooleanSupplier alive;

    CacheWatch(CacheManager cacheManager, CacheBindings caches, Transport transport, Membership membership,
               BooleanSupplier alive) {
        this.cacheManager = cacheManager;
        this.caches = caches;
        this.transport = transport;
        this.membership = membership;
        this.alive = alive;
    }

    /** Registers with the CacheManager and binds the replicated caches it already has. */
    void start() {
        cacheManager.getCacheManagerEventListenerRegistry().registerListener(this);
        for (String name : cacheManager.getCacheNames()) {
            bindIfReplicated(name);
        }
    }

    void stop() {
        try {
            cacheManager.getCacheManagerEventListenerRegistry().unregisterListener(this);
        } catch (RuntimeException e) {
            LOG.debug("ehrelay: could not unregister from CacheManager {}", cacheManager.getName(), e);
        }
    }

    private void bindIfReplicated(String cacheName) {
        if (caches.isReplicated(cacheName)) {
            caches.bind(cacheName);
            if (alive.getAsBoolean()) {
                transport.cacheAdded(cacheName);
                membership.localAdded();
            }
        }
    }

    @Override
    public void init() {
    }

    @Override
    public Status getStatus() {
        return alive.getAsBoolean() ? Status.STATUS_ALIVE : Status.STATUS_SHUTDOWN;
    }

    @Override
    public void dispose() {
    }

    @Override
    public void notifyCacheAdded(String cacheName) {
        if (alive.getAsBoolean()) {
            bindIfReplicated(cacheName);
        }
    }

    @Override
    public void notifyCacheRemoved(String cacheName) {
        if (alive.getAsBoolean()) {
            transport.cacheRemoved(cacheName);
            membership.localRemoved();
        }
    }
}
