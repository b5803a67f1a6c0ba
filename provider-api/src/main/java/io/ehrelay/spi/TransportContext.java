package io.ehrelay.spi;

import java.util.concurrent.ThreadFactory;

import io.ehrelay.codec.CodecLimits;
import io.ehrelay.config.ListenerConfig;
import io.ehrelay.metrics.ReplicationMetrics;

/** What provider-api hands a transport when it starts it. */
public interface TransportContext {

    /** Where to deliver what arrives. */
    InboundHandler inbound();

    /** Creates daemon threads that are counted in the node's thread metrics; transports create no others. */
    ThreadFactory threads(String role);

    /** Decoder limits: transports must reject frames larger than {@code maxFrameBytes} before reading them. */
    CodecLimits limits();

    /** Where to listen, or {@code null} when the CacheManager configured no peer listener. */
    ListenerConfig listener();

    /** The node's metrics, for transport-level counts (bytes, rejected frames, connections). */
    ReplicationMetrics metrics();

    /**
     * The node's time source: transports read it for everything whose behaviour depends on elapsed time
     * (backoff, linger, expiry), so tests can move time instead of sleeping.
     */
    default Clock clock() {
        return Clock.SYSTEM;
    }

    /** The CacheManager's name, for thread names and log lines. */
    String cacheManagerName();

    /**
     * For transports that know the cluster's members themselves (a JGroups view): the current members' endpoints,
     * which replace those reported before. This node's own endpoint may be included; it is left out.
     */
    void setMembers(java.util.Collection<String> endpoints);

    /**
     * After a partition healed (e.g. a JGroups merge view): reload every replicated cache from this peer, whose
     * elements overwrite this node's. Asynchronous; counted in {@code resyncs} / {@code resyncFailures}.
     */
    void resyncFrom(String peerEndpoint);
}
