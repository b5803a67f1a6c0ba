package io.ehrelay.provider;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.LocalCachePeer;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.Status;
import net.sf.ehcache.distribution.CacheManagerPeerListener;
import net.sf.ehcache.distribution.CachePeer;

/**
 * The CacheManager's peer listener. Listening itself is the node's transport, started with the provider; this
 * object reports its address and status to Ehcache.
 */
class EhrelayPeerListener implements CacheManagerPeerListener {

    private final ReplicationNode node;
    private final ListenerConfig config;

    EhrelayPeerListener(ReplicationNode node, ListenerConfig config) {
        this.node = node;
        this.config = config;
    }

    /** The endpoint peers reach this node at, once started; e.g. {@code 127.0.0.1:40123}. */
    public String endpoint() {
        return node.localEndpoint();
    }

    /** One {@link LocalCachePeer} per replicated cache, as stock lists its bound peers. */
    @Override
    @SuppressWarnings("rawtypes")
    public List getBoundCachePeers() {
        String endpoint = node.localEndpoint();
        if (endpoint == null || !node.isAlive()) {
            return Collections.emptyList();
        }
        List<CachePeer> out = new ArrayList<>();
        for (String cacheName : node.liveReplicatedCaches()) {
            out.add(new LocalCachePeer(cacheName, LocalCachePeer.urlBase(endpoint), node.inbound()));
        }
        return out;
    }

    /**
     * Identifies the listening address for Ehcache's duplicate-listener check; with {@code port=0} every
     * listener gets its own free port, so the identity of this listener is part of the identifier.
     */
    @Override
    public String getUniqueResourceIdentifier() {
        String id = config.hostName() + ":" + config.port();
        return config.port() == 0 ? id + "/" + System.identityHashCode(this) : id;
    }

    @Override
    public void attemptResolutionOfUniqueResourceConflict() throws IllegalStateException, CacheException {
        throw new CacheException("ehrelay: another CacheManager in this JVM already listens on " + config.hostName()
                + ":" + config.port() + "; give each CacheManager its own port (or port=0 for any free port)");
    }

    @Override
    public String getScheme() {
        return node.scheme();
    }

    @Override
    public void init() throws CacheException {
        // the node starts with the peer provider, which Ehcache initialises before its listeners
        if (!node.isAlive() && node.config() == null) {
            throw new CacheException("ehrelay: CacheManager " + node.cacheManager().getName() + " has a "
                    + node.scheme() + " peer listener but no matching cacheManagerPeerProviderFactory");
        }
    }

    @Override
    public Status getStatus() {
        return node.status();
    }

    @Override
    public void dispose() throws CacheException {
        node.stop();
    }

    /** Nothing to do: the node follows the CacheManager's caches itself (a transport may have no listener). */
    @Override
    public void notifyCacheAdded(String cacheName) {
    }

    /** Nothing to do: the node follows the CacheManager's caches itself (a transport may have no listener). */
    @Override
    public void notifyCacheRemoved(String cacheName) {
    }
}
