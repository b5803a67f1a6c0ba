package io.ehrelay.hessian;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The provider-api contract suite over Hessian/HTTP on 127.0.0.1. */
class HessianContractTest extends ReplicationContractTest {

    /**
     * HTTP on 127.0.0.1, any free port. The receiver holds 4 MiB per sender and the sender 16 MiB: 4,000 events
     * of 16 KiB overflow.
     */
    static final TransportFixture FIXTURE = TransportFixture.of(HessianSettings.SCHEME, HessianSettings.NAME,
            HessianCacheManagerPeerProviderFactory.class, HessianCacheManagerPeerListenerFactory.class,
            HessianCacheReplicatorFactory.class, HessianBootstrapCacheLoaderFactory.class)
            .withOverflow(16 * 1024, 4000);

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
