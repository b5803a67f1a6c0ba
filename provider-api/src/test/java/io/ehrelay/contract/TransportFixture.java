package io.ehrelay.contract;

/**
 * What a transport module tells the contract suite: its four factory classes, its provider scheme and the
 * properties that make a node listen on loopback. The suite adds discovery and queue settings itself.
 */
public interface TransportFixture {

    String providerFactory();

    /** The listener factory, or {@code null} for a transport without one (JGroups: the channel listens). */
    String listenerFactory();

    String replicatorFactory();

    String bootstrapFactory();

    /** The provider scheme, e.g. {@code ehrelay-tcp}. */
    String scheme();

    /** The transport's short name as in ObjectNames, e.g. {@code tcp}. */
    String transportName();

    /** Listener properties binding to loopback on a free port, e.g. {@code hostName=127.0.0.1, port=0}. */
    default String listenerProperties() {
        return "hostName=127.0.0.1, port=0";
    }

    /** The name of the manual peer list property. */
    default String manualPeersProperty() {
        return "peers";
    }

    /**
     * Whether the suite wires nodes itself (manual peer list plus {@code registerPeer}); {@code false} when the
     * extra provider properties configure automatic discovery.
     */
    default boolean manualDiscovery() {
        return true;
    }

    /** Extra provider properties the transport needs in tests (none by default). */
    default String extraProviderProperties() {
        return "";
    }

    /**
     * Value size and count for the overflow tests: large enough that the transport's own buffers (socket
     * buffers, per-peer outbound bounds) cannot absorb the whole run, so the replication queue must overflow.
     */
    default int overflowValueBytes() {
        return 1024;
    }

    default int overflowEventCount() {
        return 2000;
    }
}
