package io.ehrelay.provider;

import java.util.Properties;

import io.ehrelay.internal.Dependencies;
import io.ehrelay.internal.config.MixedFactories;
import io.ehrelay.internal.config.ReplicatorConfig;
import net.sf.ehcache.event.CacheEventListener;
import net.sf.ehcache.event.CacheEventListenerFactory;

/**
 * Base of every transport's replicator factory ({@code cacheEventListenerFactory}): parses the stock
 * replicator properties plus ehrelay's own, rejecting unknown or malformed ones.
 */
public abstract class EhrelayReplicatorFactory extends CacheEventListenerFactory {

    private final String scheme;
    private final String providerFactoryClassName;

    /**
     * @param scheme                   the scheme of the transport's peer provider, through which replicators
     *                                 find their node
     * @param providerFactoryClassName the class users put in {@code cacheManagerPeerProviderFactory}, for errors
     */
    protected EhrelayReplicatorFactory(String scheme, String providerFactoryClassName) {
        this.scheme = scheme;
        this.providerFactoryClassName = providerFactoryClassName;
    }

    @Override
    public CacheEventListener createCacheEventListener(Properties properties) {
        Dependencies.check();
        // the factory sees only its properties: the CacheManager is found by the constructor's monitor
        MixedFactories.checkConstructing();
        return new EhrelayReplicator(scheme, providerFactoryClassName,
                ReplicatorConfig.parse(getClass().getSimpleName(), properties));
    }
}
