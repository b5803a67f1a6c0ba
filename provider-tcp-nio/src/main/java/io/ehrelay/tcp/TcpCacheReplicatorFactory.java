package io.ehrelay.tcp;

import io.ehrelay.provider.EhrelayReplicatorFactory;

/** {@code cacheEventListenerFactory} of the TCP transport, with the stock replicator properties. */
public class TcpCacheReplicatorFactory extends EhrelayReplicatorFactory {

    @Override
    protected String scheme() {
        return TcpSettings.SCHEME;
    }

    @Override
    protected String providerFactoryClassName() {
        return TcpCacheManagerPeerProviderFactory.class.getName();
    }
}
