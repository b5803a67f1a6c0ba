package io.ehrelay.loopback;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The contract suite on the in-memory loopback transport. */
public class LoopbackContractTest extends ReplicationContractTest {

    /** The loopback transport with manual peers; {@link TransportFixture#withAutomaticDiscovery} for discovery. */
    public static final TransportFixture FIXTURE = TransportFixture.of(Loopback.SCHEME, Loopback.NAME,
            LoopbackCacheManagerPeerProviderFactory.class, LoopbackCacheManagerPeerListenerFactory.class,
            LoopbackCacheReplicatorFactory.class, LoopbackBootstrapCacheLoaderFactory.class);

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
