package io.ehrelay.internal.engine;

import io.ehrelay.internal.config.BootstrapConfig;
import io.ehrelay.internal.config.ReplicatorConfig;
import io.ehrelay.spi.Op;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;

/**
 * What the provider layer asks of a configured node ({@link ReplicationNode#replication()}): replicate a cache's
 * writes ({@link Outbound}), load a cache from a peer ({@link StateTransfer}), resync from a peer
 * ({@link Convergence}), register and unregister peers ({@link PeerRegistrations}), tell which peers hold a
 * cache. Thread-safe.
 */
public final class Replication {

    private final Engine engine;
    private final PeerRegistrations registrations;

    Replication(Engine engine, PeerRegistrations registrations) {
        this.engine = engine;
        this.registrations = registrations;
    }

    /** Replicates a put or update with its value (see {@link Outbound} for where it is encoded). */
    public void put(CacheBinding binding, Ehcache cache, Element element, ReplicatorConfig rc) {
        engine.outbound.put(binding, cache, element, rc);
    }

    /**
     * Replicates a remove ({@link Op#REMOVE}) or an invalidation ({@link Op#INVALIDATE}) of {@code key}; for an
     * invalidation, {@code element} is the element put.
     */
    public void key(CacheBinding binding, Ehcache cache, Op op, Element element, Object key, ReplicatorConfig rc) {
        engine.outbound.keyEvent(binding, cache, op, element, key, rc);
    }

    public void removeAll(CacheBinding binding, Ehcache cache, ReplicatorConfig rc) {
        engine.outbound.removeAll(binding, cache, rc);
    }

    /** Loads {@code cache} from a peer (see {@link StateTransfer}). */
    public void bootstrap(Ehcache cache, BootstrapConfig bc, long clusterFormMillis) {
        engine.stateTransfer.bootstrap(cache, bc, clusterFormMillis);
    }

    /** Reloads every replicated cache from {@code peerEndpoint} (see {@link Convergence}). */
    public void resyncFrom(String peerEndpoint) {
        engine.convergence.resyncFrom(peerEndpoint);
    }

    /**
     * Registers a peer by any spelling its transport understands (see {@link PeerRegistrations}).
     *
     * @throws CacheException naming the accepted formats when {@code entry} names no peer
     */
    public void registerPeer(String entry) {
        registrations.register(entry);
    }

    public void unregisterPeer(String entry) {
        registrations.unregister(entry);
    }

    /** Whether the peer at {@code endpoint} holds {@code cacheName}, as far as this node knows ({@link Membership}). */
    public boolean peerHolds(String endpoint, String cacheName) {
        return engine.membership.has(endpoint, cacheName);
    }
}
