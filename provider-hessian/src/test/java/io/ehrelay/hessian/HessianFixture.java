package io.ehrelay.hessian;

import io.ehrelay.contract.TransportFixture;

/** The Hessian/HTTP transport as the contract suite sees it: HTTP on 127.0.0.1, any free port. */
class HessianFixture implements TransportFixture {

    @Override
    public String providerFactory() {
        return HessianCacheManagerPeerProviderFactory.class.getName();
    }

    @Override
    public String listenerFactory() {
        return HessianCacheManagerPeerListenerFactory.class.getName();
    }

    @Override
    public String replicatorFactory() {
        return HessianCacheReplicatorFactory.class.getName();
    }

    @Override
    public String bootstrapFactory() {
        return HessianBootstrapCacheLoaderFactory.class.getName();
    }

    @Override
    public String scheme() {
        return HessianSettings.SCHEME;
    }

    @Override
    public String transportName() {
        return HessianSettings.NAME;
    }

    /** The receiver holds 4 MiB per sender and the sender 16 MiB: 4,000 events of 16 KiB overflow. */
    @Override
    public int overflowValueBytes() {
        return 16 * 1024;
    }

    @Override
    public int overflowEventCount() {
        return 4000;
    }
}
