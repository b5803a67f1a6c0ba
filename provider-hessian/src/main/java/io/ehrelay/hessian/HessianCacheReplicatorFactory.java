package io.ehrelay.hessian;

import io.ehrelay.provider.EhrelayReplicatorFactory;

/** {@code cacheEventListenerFactory} of the Hessian/HTTP transport, with the stock replicator properties. */
public class HessianCacheReplicatorFactory extends EhrelayReplicatorFactory {

    public HessianCacheReplicatorFactory() {
        super(HessianSettings.SCHEME, HessianCacheManagerPeerProviderFactory.class.getName());
    }
}
