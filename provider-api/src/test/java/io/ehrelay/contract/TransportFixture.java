package io.ehrelay.contract;

/**
 * What a transport module tells the contract suite: its four factory classes, its provider scheme and the
 * properties that make a node listen on loopback. The suite adds discovery and queue settings itself. Each
 * transport makes one with {@link #of} and adjusts it with the {@code with…} methods; instances are immutable.
 *
 * @param providerFactory the peer provider factory class name
 * @param listenerFactory the listener factory, or {@code null} for a transport without one (JGroups: the channel
 *        listens)
 * @param replicatorFactory the cache replicator factory class name
 * @param bootstrapFactory the bootstrap cache loader factory class name
 * @param scheme the provider scheme, e.g. {@code ehrelay-tcp}
 * @param transportName the transport's short name as in ObjectNames, e.g. {@code tcp}
 * @param listenerProperties listener properties binding to loopback on a free port
 * @param manualPeersProperty the name of the manual peer list property
 * @param manualDiscovery whether the suite wires nodes itself (manual peer list plus {@code registerPeer});
 *        {@code false} when {@code extraProviderProperties} configure automatic discovery
 * @param extraProviderProperties extra provider properties the transport needs in tests
 * @param overflowValueBytes value size for the overflow tests: large enough, with {@code overflowEventCount},
 *        that the transport's own buffers (socket buffers, per-peer outbound bounds) cannot absorb the whole run,
 *        so the replication queue must overflow
 * @param overflowEventCount event count for the overflow tests
 */
public record TransportFixture(String providerFactory, String listenerFactory, String replicatorFactory,
        String bootstrapFactory, String scheme, String transportName, String listenerProperties,
        String manualPeersProperty, boolean manualDiscovery, String extraProviderProperties, int overflowValueBytes,
        int overflowEventCount) {

    /**
     * A transport with the defaults: listening on {@code 127.0.0.1}, any free port; manual peers in property
     * {@code peers}; no extra provider properties; overflow runs of 2,000 events of 1 KiB.
     *
     * @param listenerFactory {@code null} for a transport without a listener factory
     */
    public static TransportFixture of(String scheme, String transportName, Class<?> providerFactory,
            Class<?> listenerFactory, Class<?> replicatorFactory, Class<?> bootstrapFactory) {
        return new TransportFixture(providerFactory.getName(),
                listenerFactory == null ? null : listenerFactory.getName(), replicatorFactory.getName(),
                bootstrapFactory.getName(), scheme, transportName, "hostName=127.0.0.1, port=0", "peers", true, "",
                1024, 2000);
    }

    public TransportFixture withListenerProperties(String properties) {
        return new TransportFixture(providerFactory, listenerFactory, replicatorFactory, bootstrapFactory, scheme,
                transportName, properties, manualPeersProperty, manualDiscovery, extraProviderProperties,
                overflowValueBytes, overflowEventCount);
    }

    public TransportFixture withManualPeersProperty(String property) {
        return new TransportFixture(providerFactory, listenerFactory, replicatorFactory, bootstrapFactory, scheme,
                transportName, listenerProperties, property, manualDiscovery, extraProviderProperties,
                overflowValueBytes, overflowEventCount);
    }

    /** The same transport with these extra provider properties (replacing any set before), peers still manual. */
    public TransportFixture withExtraProviderProperties(String properties) {
        return new TransportFixture(providerFactory, listenerFactory, replicatorFactory, bootstrapFactory, scheme,
                transportName, listenerProperties, manualPeersProperty, manualDiscovery, properties,
                overflowValueBytes, overflowEventCount);
    }

    /** The same transport with automatic discovery: {@code properties} configure it and replace the peer list. */
    public TransportFixture withAutomaticDiscovery(String properties) {
        return new TransportFixture(providerFactory, listenerFactory, replicatorFactory, bootstrapFactory, scheme,
                transportName, listenerProperties, manualPeersProperty, false, properties, overflowValueBytes,
                overflowEventCount);
    }

    public TransportFixture withOverflow(int valueBytes, int eventCount) {
        return new TransportFixture(providerFactory, listenerFactory, replicatorFactory, bootstrapFactory, scheme,
                transportName, listenerProperties, manualPeersProperty, manualDiscovery, extraProviderProperties,
                valueBytes, eventCount);
    }
}
