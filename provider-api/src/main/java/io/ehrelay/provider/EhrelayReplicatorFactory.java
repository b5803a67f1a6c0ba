package io.ehrelay.provider;

import java.util.Properties;

import io.ehrelay.config.ReplicatorConfig;
import net.sf.ehcache.event.CacheEventListener;
import net.sf.ehcache.event.CacheEventListenerFactory;

/**
 * Base of every transport's replicator factory ({@code cacheEventListenerFactory}): parses the stock
 * replicator properties plus ehrelay's own, rejecting unknown or malformed ones.
 */
public abstract class EhrelayReplicatorFactory extends CacheEventListenerFactory {

    /** The scheme of the transport's peer provider, through which replicators find their node. */
    protected abstract String scheme();

    /** The class name users put in {@code cacheManagerPeerProviderFactory}, for error messages. */
    protected abstract String providerFactoryClassName();

    @Override
    public CacheEventListener createCacheEventListener(Properties properties) {
        return new EhrelayReplicator(scheme(), providerFactoryClassName(),
                ReplicatorConfig.parse(getClass().getSimpleName(), properties));
    }
}
