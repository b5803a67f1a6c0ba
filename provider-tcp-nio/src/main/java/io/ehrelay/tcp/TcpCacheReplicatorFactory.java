package io.ehrelay.tcp;

import io.ehrelay.provider.EhrelayReplicatorFactory;

/** {@code cacheEventListenerFactory} of the TCP transport, with the stock replicator properties. */
public class TcpCacheReplicatorFactory extends EhrelayReplicatorFactory {

    public TcpCacheReplicatorFactory() {
        super(TcpSettings.SCHEME, TcpCacheManagerPeerProviderFactory.class.getName());
    }
}
