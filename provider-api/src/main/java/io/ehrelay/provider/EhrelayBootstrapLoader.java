package io.ehrelay.provider;

import io.ehrelay.internal.config.BootstrapConfig;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.bootstrap.BootstrapCacheLoader;
import net.sf.ehcache.distribution.CacheManagerPeerProvider;

/**
 * Loads a cache's content from one peer when the cache starts: waits for the cluster to form (automatic
 * discovery), asks one peer for its state in chunks of at most {@code maximumChunkSizeBytes}, and tries the
 * next peer when one fails. Elements already replicated live are kept (they are newer than the snapshot).
 */
class EhrelayBootstrapLoader implements BootstrapCacheLoader, Cloneable {

    private final String scheme;
    private final String providerFactoryClassName;
    private final BootstrapConfig config;

    EhrelayBootstrapLoader(String scheme, String providerFactoryClassName, BootstrapConfig config) {
        this.scheme = scheme;
        this.providerFactoryClassName = providerFactoryClassName;
        this.config = config;
    }

    public BootstrapConfig config() {
        return config;
    }

    @Override
    public void load(Ehcache cache) throws CacheException {
        ReplicationNode node = NodeLookup.nodeOf(cache, scheme, providerFactoryClassName, "an ehrelay bootstrap loader");
        CacheManagerPeerProvider provider = cache.getCacheManager().getCacheManagerPeerProvider(scheme);
        long clusterForm = provider == null ? 0 : provider.getTimeForClusterToForm();
        node.replication().bootstrap(cache, config, clusterForm);
    }

    @Override
    public boolean isAsynchronous() {
        return config.asynchronous();
    }

    @Override
    public EhrelayBootstrapLoader clone() throws CloneNotSupportedException {
        super.clone();
        return new EhrelayBootstrapLoader(scheme, providerFactoryClassName, config);
    }
}
