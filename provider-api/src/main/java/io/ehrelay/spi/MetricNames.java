package io.ehrelay.spi;

/**
 * The names of the metrics that more than one class writes (the engine and the transports), as
 * published in JMX ({@code io.ehrelay:type=CacheManager,...,name=<name>}) and listed in {@code docs/metrics.md}:
 * written once here, so that a typo cannot start a new metric. Pass them to {@link TransportMetrics#count}.
 */
public final class MetricNames {

    /** Calls, connections and frames refused for lacking the cluster secret or a listed host. */
    public static final String UNAUTHORIZED = "unauthorized";
    /** Inbound connections refused (or closed) because {@code maxInboundConnections} were open. */
    public static final String REFUSED_CONNECTIONS = "refusedConnections";
    /** Attempts to connect to a peer that failed. */
    public static final String CONNECT_FAILURES = "connectFailures";
    /** HTTP requests whose headers or body came slower than the listener allows (Hessian). */
    public static final String SLOW_REQUESTS = "slowRequests";
    /** Posted batches dropped for want of room in the apply queue (JGroups). */
    public static final String POSTS_DROPPED = "postsDropped";
    /** Writing threads that waited for room in a full queue ({@code overflowPolicy=block}). */
    public static final String OVERFLOW_WAITS = "overflowWaits";
    /** Gaps found in a peer's batch numbers. */
    public static final String GAPS = "gaps";
    /** Resynchronisations from a peer that completed, and those that failed. */
    public static final String RESYNCS = "resyncs";
    public static final String RESYNC_FAILURES = "resyncFailures";
    /** Batches received twice (applied once). */
    public static final String DUPLICATE_BATCHES = "duplicateBatches";
    /** Anti-entropy rounds, and those that failed. */
    public static final String ANTI_ENTROPY_ROUNDS = "antiEntropyRounds";
    public static final String ANTI_ENTROPY_FAILURES = "antiEntropyFailures";
    /** Multicast heartbeats that could not be read. */
    public static final String MALFORMED_HEARTBEATS = "malformedHeartbeats";
    /** Gauge: inbound connections open now (TCP, RMI, JGroups). */
    public static final String CONNECTIONS_IN = "connectionsIn";
    /** Gauge: bytes of the receive budget ({@code inboundBufferMaxBytes}) in use now. */
    public static final String INBOUND_BUFFER_BYTES = "inboundBufferBytes";
    /** Gauges, per cache and for the CacheManager: tombstones held, and versions (keys whose newest write is known). */
    public static final String TOMBSTONES = "tombstones";
    public static final String VERSIONS = "versions";

    private MetricNames() {
    }
}
