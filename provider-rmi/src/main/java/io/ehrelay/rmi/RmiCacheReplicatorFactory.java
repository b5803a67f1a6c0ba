package io.ehrelay.rmi;

import io.ehrelay.provider.EhrelayReplicatorFactory;

/** {@code cacheEventListenerFactory} of the RMI transport, with the stock replicator properties. */
public class RmiCacheReplicatorFactory extends EhrelayReplicatorFactory {

    public RmiCacheReplicatorFactory() {
        super(RmiSettings.SCHEME, RmiCacheManagerPeerProviderFactory.class.getName());
    }
}
