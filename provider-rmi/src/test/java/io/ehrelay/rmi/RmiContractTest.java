package io.ehrelay.rmi;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The provider-api contract suite over Java RMI on 127.0.0.1. */
class RmiContractTest extends ReplicationContractTest {

    /**
     * Registry on 127.0.0.1, any free port; manual peers in the stock {@code rmiUrls}. Socket buffers and the
     * per-peer outbound bound hold a few MiB: 4,000 events of 16 KiB cannot hide there.
     */
    static final TransportFixture FIXTURE = TransportFixture.of(RmiSettings.SCHEME, RmiSettings.NAME,
            RmiCacheManagerPeerProviderFactory.class, RmiCacheManagerPeerListenerFactory.class,
            RmiCacheReplicatorFactory.class, RmiBootstrapCacheLoaderFactory.class)
            .withManualPeersProperty("rmiUrls")
            .withOverflow(16 * 1024, 4000);

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
