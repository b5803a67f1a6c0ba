package io.ehrelay.tcp;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The provider-api contract suite over real TCP sockets on 127.0.0.1. */
class TcpContractTest extends ReplicationContractTest {

    /**
     * Listening on 127.0.0.1, any free port. Socket buffers hold a few MiB: 4,000 events of 16 KiB (64 MiB)
     * cannot all hide in them.
     */
    static final TransportFixture FIXTURE = TransportFixture.of(TcpSettings.SCHEME, TcpSettings.NAME,
            TcpCacheManagerPeerProviderFactory.class, TcpCacheManagerPeerListenerFactory.class,
            TcpCacheReplicatorFactory.class, TcpBootstrapCacheLoaderFactory.class)
            .withOverflow(16 * 1024, 4000);

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
