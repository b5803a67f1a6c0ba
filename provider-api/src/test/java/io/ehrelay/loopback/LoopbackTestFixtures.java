package io.ehrelay.loopback;

import io.ehrelay.contract.TransportFixture;

/** Loopback fixtures with other discovery settings. */
public final class LoopbackTestFixtures {

    private LoopbackTestFixtures() {
    }

    /** The loopback transport with automatic discovery; {@code discovery} replaces the manual peer list. */
    public static TransportFixture automatic(String discovery) {
        TransportFixture base = LoopbackContractTest.FIXTURE;
        return new TransportFixture() {
            @Override public String providerFactory() { return base.providerFactory(); }
            @Override public String listenerFactory() { return base.listenerFactory(); }
            @Override public String replicatorFactory() { return base.replicatorFactory(); }
            @Override public String bootstrapFactory() { return base.bootstrapFactory(); }
            @Override public String scheme() { return base.scheme(); }
            @Override public String transportName() { return base.transportName(); }
            @Override public String extraProviderProperties() { return discovery; }
            @Override public boolean manualDiscovery() { return false; }
        };
    }
}
