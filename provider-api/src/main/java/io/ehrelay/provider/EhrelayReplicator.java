package io.ehrelay.provider;

import java.io.IOException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ehrelay.codec.EventCodec;
import io.ehrelay.codec.Op;
import io.ehrelay.config.ReplicatorConfig;
import io.ehrelay.engine.RateLimitedLog;
import io.ehrelay.engine.ReplicationNode;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CacheReplicator;

/**
 * The per-cache replicator: turns Ehcache's put, update, remove and removeAll notifications into encoded
 * events (on the writing thread, so the queue holds exact bytes) and hands them to the CacheManager's shared
 * node, asynchronously through its bounded queue or synchronously with acknowledgements. Expiry and eviction
 * are local and never replicated. Events applied from peers arrive with {@code doNotNotifyCacheReplicators},
 * so nothing echoes back. Thread-safe; one instance per cache ({@link #clone()} for caches made from
 * {@code defaultCache}).
 */
public class EhrelayReplicator implements CacheReplicator {

    private static final Logger LOG = LoggerFactory.getLogger(EhrelayReplicator.class);
    private static final RateLimitedLog WARN = new RateLimitedLog(LOG, 10_000);

    private final String scheme;
    private final String providerFactoryClassName;
    private final ReplicatorConfig config;
    private volatile boolean alive = true;
    private volatile ReplicationNode.CacheBinding binding;
    private volatile ReplicationNode node;

    public EhrelayReplicator(String scheme, String providerFactoryClassName, ReplicatorConfig config) {
        this.scheme = scheme;
        this.providerFactoryClassName = providerFactoryClassName;
        this.config = config;
    }

    public ReplicatorConfig config() {
        return config;
    }

    /** The scheme of the peer provider this replicator sends through. */
    public String scheme() {
        return scheme;
    }

    @Override
    public void notifyElementPut(Ehcache cache, Element element) throws CacheException {
        touchLocal(cache, element == null ? null : element.getObjectKey(), element != null);
        if (config.replicatePuts()) {
            replicateElement(cache, element, config.replicatePutsViaCopy());
        }
    }

    @Override
    public void notifyElementUpdated(Ehcache cache, Element element) throws CacheException {
        touchLocal(cache, element == null ? null : element.getObjectKey(), element != null);
        if (config.replicateUpdates()) {
            replicateElement(cache, element, config.replicateUpdatesViaCopy());
        }
    }

    @Override
    public void notifyElementRemoved(Ehcache cache, Element element) throws CacheException {
        touchLocal(cache, element == null ? null : element.getObjectKey(), element != null);
        if (config.replicateRemovals() && element != null && alive) {
            send(cache, element.getObjectKey(), Op.REMOVE);
        }
    }

    @Override
    public void notifyRemoveAll(Ehcache cache) {
        touchLocal(cache, null, true);
        if (config.replicateRemovals() && alive) {
            byte[] event;
            try {
                event = EventCodec.encodeRemoveAll(cache.getName());
            } catch (IOException e) {
                throw new CacheException(e);
            }
            dispatch(cache, event);
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
        if (!viaCopy) {
            send(cache, element.getObjectKey(), Op.INVALIDATE);
            return;
        }
        if (config.asynchronous()) {
            ReplicationNode.CacheBinding b = bindingFor(cache);
            try {
                node.enqueuePut(b, element);
            } catch (IOException | RuntimeException e) {
                notEncodable(cache, element.getObjectKey(), e);
            }
            return;
        }
        byte[] event;
        try {
            event = EventCodec.encodePut(cache.getName(), element);
        } catch (IOException | RuntimeException e) {
            notEncodable(cache, element.getObjectKey(), e);
            return;
        }
        dispatch(cache, event);
    }

    private void send(Ehcache cache, Object key, Op op) {
        byte[] event;
        try {
            event = EventCodec.encodeKey(op, cache.getName(), key);
        } catch (IOException | RuntimeException e) {
            notEncodable(cache, key, e);
            return;
        }
        dispatch(cache, event);
    }

    /** Tells a resync running on the node that the application changed this key (null key: all). */
    private void touchLocal(Ehcache cache, Object key, boolean known) {
        if (known && alive) {
            bindingFor(cache);
            node.touchLocal(cache.getName(), key);
        }
    }

    private void notEncodable(Ehcache cache, Object key, Exception e) {
        ReplicationNode.CacheBinding b = bindingFor(cache);
        b.metrics().onFailed();
        WARN.warn("encode:" + cache.getName(), "ehrelay: key {} of cache {} cannot be replicated (counted in "
                + "failed): {}", key, cache.getName(), e.toString());
    }

    private void dispatch(Ehcache cache, byte[] event) {
        ReplicationNode.CacheBinding b = bindingFor(cache);
        if (config.asynchronous()) {
            node.enqueue(b, event);
        } else {
            node.replicateSynchronously(b, event, config);
        }
    }

    private ReplicationNode.CacheBinding bindingFor(Ehcache cache) {
        ReplicationNode.CacheBinding b = binding;
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
