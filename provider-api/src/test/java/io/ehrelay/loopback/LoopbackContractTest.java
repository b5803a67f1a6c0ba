package io.ehrelay.loopback;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TransportFixture;

/** The contract suite on the in-memory loopback transport. */
class LoopbackContractTest extends ReplicationContractTest {

    static final TransportFixture FIXTURE = new TransportFixture() {
        @Override
        public String providerFactory() {
            return LoopbackCacheManagerPeerProviderFactory.class.getName();
        }

        @Override
        public String listenerFactory() {
            return LoopbackCacheManagerPeerListenerFactory.class.getName();
        }

        @Override
        public String replicatorFactory() {
            return LoopbackCacheReplicatorFactory.class.getName();
        }

        @Override
        public String bootstrapFactory() {
            return LoopbackBootstrapCacheLoaderFactory.class.getName();
        }

        @Override
        public String scheme() {
            return Loopback.SCHEME;
        }

        @Override
        public String transportName() {
            return Loopback.NAME;
        }
    };

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
