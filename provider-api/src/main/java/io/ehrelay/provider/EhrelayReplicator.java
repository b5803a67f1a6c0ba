package io.ehrelay.provider;

import java.util.function.Predicate;

import io.ehrelay.internal.config.ReplicatorConfig;
import io.ehrelay.internal.engine.CacheBinding;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.Op;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CacheReplicator;
import net.sf.ehcache.event.CacheEventListener;

/**
 * The per-cache replicator: hands Ehcache's put, update, remove and removeAll notifications to the
 * CacheManager's shared node, which encodes them (see the node's {@code Outbound} for where and on which thread)
 * and replicates them asynchronously through its bounded queue or synchronously with acknowledgements. Expiry
 * and eviction
 * are local and never replicated. Events applied from peers arrive with {@code doNotNotifyCacheReplicators},
 * so nothing echoes back. Thread-safe; one instance per cache ({@link #clone()} for caches made from
 * {@code defaultCache}).
 */
class EhrelayReplicator implements CacheReplicator {

    private final String scheme;
    private final String providerFactoryClassName;
    private final ReplicatorConfig config;
    private volatile boolean alive = true;
    private volatile CacheBinding binding;
    private volatile ReplicationNode node;

    EhrelayReplicator(String scheme, String providerFactoryClassName, ReplicatorConfig config) {
        this.scheme = scheme;
        this.providerFactoryClassName = providerFactoryClassName;
        this.config = config;
    }

    public ReplicatorConfig config() {
        return config;
    }

    /** Tells the replicators of {@code scheme} among a cache's listeners (for the node's cache bindings). */
    static Predicate<CacheEventListener> of(String scheme) {
        return l -> l instanceof EhrelayReplicator && ((EhrelayReplicator) l).scheme.equals(scheme);
    }

    /** The scheme of the peer provider this replicator sends through. */
    public String scheme() {
        return scheme;
    }

    @Override
    public void notifyElementPut(Ehcache cache, Element element) throws CacheException {
        if (config.replicatePuts()) {
            replicateElement(cache, element, config.replicatePutsViaCopy());
        }
    }

    @Override
    public void notifyElementUpdated(Ehcache cache, Element element) throws CacheException {
        if (config.replicateUpdates()) {
            replicateElement(cache, element, config.replicateUpdatesViaCopy());
        }
    }

    @Override
    public void notifyElementRemoved(Ehcache cache, Element element) throws CacheException {
        if (config.replicateRemovals() && element != null && alive) {
            CacheBinding b = bindingFor(cache); // sets node
            node.replication().key(b, cache, Op.REMOVE, element, element.getObjectKey(), config);
        }
    }

    @Override
    public void notifyRemoveAll(Ehcache cache) {
        if (config.replicateRemovals() && alive) {
            CacheBinding b = bindingFor(cache); // sets node
            node.replication().removeAll(b, cache, config);
        }
    }

    @Override
    public void notifyElementExpired(Ehcache cache, Element element) {
        // expiry happens on every node by itself
    }

    @Override
    public void notifyElementEvicted(Ehcache cache, Element element) {
        // eviction is a local memory decision
    }

    private void replicateElement(Ehcache cache, Element element, boolean viaCopy) {
        if (element == null || !alive) {
            return;
        }
        CacheBinding b = bindingFor(cache);
        if (viaCopy) {
            node.replication().put(b, cache, element, config);
        } else {
            node.replication().key(b, cache, Op.INVALIDATE, element, element.getObjectKey(), config);
        }
    }

    private CacheBinding bindingFor(Ehcache cache) {
        CacheBinding b = binding;
        if (b != null && b.cacheName().equals(cache.getName()) && node.isAlive()) {
            return b;
        }
        ReplicationNode n = NodeLookup.nodeOf(cache, scheme, providerFactoryClassName, "an ehrelay replicator");
        b = n.bind(cache.getName());
        node = n;
        binding = b;
        return b;
    }

    @Override
    public boolean isReplicateUpdatesViaCopy() {
        return config.replicateUpdatesViaCopy();
    }

    @Override
    public boolean notAlive() {
        return !alive;
    }

    @Override
    public boolean alive() {
        return alive;
    }

    @Override
    public void dispose() {
        alive = false;
    }

    @Override
    public EhrelayReplicator clone() throws CloneNotSupportedException {
        super.clone();
        return new EhrelayReplicator(scheme, providerFactoryClassName, config);
    }
}
