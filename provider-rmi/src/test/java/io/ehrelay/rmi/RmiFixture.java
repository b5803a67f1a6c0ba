package io.ehrelay.rmi;

import io.ehrelay.contract.TransportFixture;

/** The RMI transport as the contract suite sees it: registry on 127.0.0.1, any free port. */
class RmiFixture implements TransportFixture {

    @Override
    public String providerFactory() {
        return RmiCacheManagerPeerProviderFactory.class.getName();
    }

    @Override
    public String listenerFactory() {
        return RmiCacheManagerPeerListenerFactory.class.getName();
    }

    @Override
    public String replicatorFactory() {
        return RmiCacheReplicatorFactory.class.getName();
    }

    @Override
    public String bootstrapFactory() {
        return RmiBootstrapCacheLoaderFactory.class.getName();
    }

    @Override
    public String scheme() {
        return RmiSettings.SCHEME;
    }

    @Override
    public String transportName() {
        return RmiSettings.NAME;
    }

    @Override
    public String manualPeersProperty() {
        return "rmiUrls";
    }

    /** Socket buffers and the per-peer outbound bound hold a few MiB: 4,000 events of 16 KiB cannot hide there. */
    @Override
    public int overflowValueBytes() {
        return 16 * 1024;
    }

    @Override
    public int overflowEventCount() {
        return 4000;
    }
}
