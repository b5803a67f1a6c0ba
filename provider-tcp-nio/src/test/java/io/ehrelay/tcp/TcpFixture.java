package io.ehrelay.tcp;

import io.ehrelay.contract.TransportFixture;

/** The TCP transport as the contract suite sees it: listening on 127.0.0.1, any free port. */
class TcpFixture implements TransportFixture {

    @Override
    public String providerFactory() {
        return TcpCacheManagerPeerProviderFactory.class.getName();
    }

    @Override
    public String listenerFactory() {
        return TcpCacheManagerPeerListenerFactory.class.getName();
    }

    @Override
    public String replicatorFactory() {
        return TcpCacheReplicatorFactory.class.getName();
    }

    @Override
    public String bootstrapFactory() {
        return TcpBootstrapCacheLoaderFactory.class.getName();
    }

    @Override
    public String scheme() {
        return TcpSettings.SCHEME;
    }

    @Override
    public String transportName() {
        return TcpSettings.NAME;
    }

    /** Socket buffers hold a few MiB: 4,000 events of 16 KiB (64 MiB) cannot all hide in them. */
    @Override
    public int overflowValueBytes() {
        return 16 * 1024;
    }

    @Override
    public int overflowEventCount() {
        return 4000;
    }
}
