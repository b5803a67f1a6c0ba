package io.ehrelay.spi;

import java.util.Collection;
import java.util.concurrent.ThreadFactory;

/** What provider-api hands a transport when it starts it. */
public interface TransportContext {

    /** Where to deliver what arrives. */
    InboundHandler inbound();

    /** Creates daemon threads that are counted in the node's thread metrics; transports create no others. */
    ThreadFactory threads(String role);

    /** The largest frame or request body a peer may send: transports refuse larger ones before reading them. */
    int maxFrameBytes();

    /** Where to listen, or {@code null} when the CacheManager configured no peer listener. */
    ListenerConfig listener();

    /** The node's metrics, for the transport's own counts (connections, refused requests) and gauges. */
    TransportMetrics metrics();

    /**
     * The node's time source: transports read it for everything whose behaviour depends on elapsed time
     * (backoff, linger, expiry), so tests can move time instead of sleeping.
     */
    default Clock clock() {
        return Clock.SYSTEM;
    }

    /**
     * Which hosts may replicate without authenticating: a transport asks it for every connection or request
     * that arrives unauthenticated, and serves none it refuses (see {@link PeerGate}).
     */
    PeerGate peerGate();

    /**
     * The cluster secret peers must prove ({@code clusterSecret}), or {@code null} when none is set. A transport
     * that returns {@code true} from {@link Transport#provesClusterSecret()} then serves only peers that prove it,
     * and proves it to the peers it calls.
     */
    default ClusterSecret clusterSecret() {
        return null;
    }

    /** The CacheManager's name, for thread names and log lines. */
    String cacheManagerName();

    /**
     * For transports that find the peers themselves (a JGroups view's members): the current peers' endpoints,
     * which replace those reported before. This node's own endpoint may be included; it is left out.
     */
    void setPeers(Collection<String> endpoints);

    /**
     * After a partition healed (e.g. a JGroups merge view): reload every replicated cache from this peer, whose
     * elements overwrite this node's. Asynchronous; counted in {@code resyncs} / {@code resyncFailures}.
     */
    void resyncFrom(String peerEndpoint);
}
