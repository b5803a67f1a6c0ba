package io.ehrelay.internal.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.config.OverflowPolicy;
import io.ehrelay.internal.codec.AllowList;
import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.spi.ClusterSecret;

/**
 * Immutable per-CacheManager settings, parsed from the properties of a {@code cacheManagerPeerProviderFactory}:
 * the bounded queue, the shared dispatcher, the decoder's limits and allow-list, and peer discovery.
 */
public final class NodeConfig {

    public static final String QUEUE_MAX_BYTES = "queueMaxBytes";
    public static final String QUEUE_MAX_EVENTS = "queueMaxEvents";
    public static final String OVERFLOW_POLICY = "overflowPolicy";
    public static final String OVERFLOW_BLOCK_MILLIS = "overflowBlockMillis";
    public static final String DISPATCHER_THREADS = "dispatcherThreads";
    public static final String BATCH_MAX_EVENTS = "batchMaxEvents";
    public static final String BATCH_MAX_BYTES = "batchMaxBytes";
    public static final String BATCH_LINGER_MILLIS = "batchLingerMillis";
    public static final String SHUTDOWN_DRAIN_MILLIS = "shutdownDrainMillis";
    public static final String SEND_TIMEOUT_MILLIS = "sendTimeoutMillis";
    public static final String ALLOWED_CLASSES = "allowedClasses";
    public static final String LEARN_ALLOWED_CLASSES = "learnAllowedClasses";
    public static final String MAX_FRAME_BYTES = "maxFrameBytes";
    public static final String MAX_OBJECT_DEPTH = "maxObjectDepth";
    public static final String MAX_ARRAY_LENGTH = "maxArrayLength";
    public static final String MAX_OBJECT_REFERENCES = "maxObjectReferences";
    public static final String MAX_HASH_WORK = "maxHashWork";
    public static final String CLUSTER_SECRET = "clusterSecret";
    public static final String REGISTER_JMX = "registerJmx";
    public static final String PEER_OUTBOUND_MAX_BYTES = "peerOutboundMaxBytes";
    public static final String ANTI_ENTROPY_INTERVAL_MILLIS = "antiEntropyIntervalMillis";
    public static final String ANTI_ENTROPY_MAX_BYTES = "antiEntropyMaxBytesPerRound";
    public static final String TOMBSTONE_RETENTION_MILLIS = "tombstoneRetentionMillis";
    public static final String MAX_TOMBSTONES = "maxTombstones";

    /** A batch's bytes beyond {@code batchMaxBytes} (its header), with room to spare. */
    static final long BATCH_SLACK_BYTES = 64 * 1024;

    private final long queueMaxBytes;
    private final int queueMaxEvents;
    private final OverflowPolicy overflowPolicy;
    private final long overflowBlockMillis;
    private final int dispatcherThreads;
    private final int batchMaxEvents;
    private final int batchMaxBytes;
    private final long batchLingerMillis;
    private final long shutdownDrainMillis;
    private final long sendTimeoutMillis;
    private final CodecLimits limits;
    private final boolean registerJmx;
    private final boolean learnAllowedClasses;
    private final DiscoveryConfig discovery;
    private final long peerOutboundMaxBytes;
    private final UnauthenticatedPeers unauthenticatedPeers;
    private final ClusterSecret clusterSecret;
    private final long antiEntropyIntervalMillis;
    private final long antiEntropyMaxBytes;
    private final long tombstoneRetentionMillis;
    private final int maxTombstones;

    private NodeConfig(PropertyReader r, String manualPeersProperty) {
        queueMaxBytes = r.bytesIn(QUEUE_MAX_BYTES, 64L << 20, 1024, 1L << 40);
        queueMaxEvents = r.intIn(QUEUE_MAX_EVENTS, 100_000, 1, Integer.MAX_VALUE);
        overflowPolicy = r.choice(OVERFLOW_POLICY, OverflowPolicy.BLOCK, OverflowPolicy.class);
        overflowBlockMillis = r.longIn(OVERFLOW_BLOCK_MILLIS, 1000, 0, 3_600_000);
        dispatcherThreads = r.intIn(DISPATCHER_THREADS, 1, 1, 64);
        batchMaxEvents = r.intIn(BATCH_MAX_EVENTS, 1000, 1, 1_000_000);
        batchMaxBytes = (int) r.bytesIn(BATCH_MAX_BYTES, 1L << 20, 1024, 1L << 30);
        batchLingerMillis = r.longIn(BATCH_LINGER_MILLIS, 0, 0, 60_000);
        shutdownDrainMillis = r.longIn(SHUTDOWN_DRAIN_MILLIS, 5000, 0, 3_600_000);
        sendTimeoutMillis = r.longIn(SEND_TIMEOUT_MILLIS, 10_000, 1, 3_600_000);
        long maxFrame = r.bytesIn(MAX_FRAME_BYTES, CodecLimits.DEFAULT_MAX_FRAME_BYTES, 4096, Integer.MAX_VALUE - 64);
        int maxDepth = r.intIn(MAX_OBJECT_DEPTH, CodecLimits.DEFAULT_MAX_DEPTH, 1, 10_000);
        int maxArray = r.intIn(MAX_ARRAY_LENGTH, CodecLimits.DEFAULT_MAX_ARRAY_LENGTH, 0, Integer.MAX_VALUE);
        long maxRefs = r.longIn(MAX_OBJECT_REFERENCES, CodecLimits.DEFAULT_MAX_REFERENCES, 1, Long.MAX_VALUE);
        long maxHashWork = r.longIn(MAX_HASH_WORK, CodecLimits.DEFAULT_MAX_HASH_WORK, 1, Long.MAX_VALUE);
        AllowList allowList;
        try {
            allowList = AllowList.withDefaults(r.list(ALLOWED_CLASSES));
        } catch (IllegalArgumentException e) {
            throw r.invalid(ALLOWED_CLASSES, String.join("|", r.list(ALLOWED_CLASSES)), e.getMessage());
        }
        limits = new CodecLimits((int) maxFrame, maxDepth, maxArray, maxRefs, maxHashWork, allowList);
        registerJmx = r.bool(REGISTER_JMX, true);
        learnAllowedClasses = r.bool(LEARN_ALLOWED_CLASSES, false);
        discovery = DiscoveryConfig.read(r, manualPeersProperty);
        peerOutboundMaxBytes = r.bytesIn(PEER_OUTBOUND_MAX_BYTES, 16L << 20, 4096, 1L << 34);
        clusterSecret = readSecret(r);
        antiEntropyIntervalMillis = r.longIn(ANTI_ENTROPY_INTERVAL_MILLIS, 10_000, 0, 86_400_000);
        antiEntropyMaxBytes = r.bytesIn(ANTI_ENTROPY_MAX_BYTES, 4L << 20, 64 * 1024, 1L << 30);
        tombstoneRetentionMillis = r.longIn(TOMBSTONE_RETENTION_MILLIS, 600_000, 1000, 30L * 86_400_000);
        maxTombstones = r.intIn(MAX_TOMBSTONES, 100_000, 0, Integer.MAX_VALUE);
        if (antiEntropyIntervalMillis > 0 && tombstoneRetentionMillis < 3 * antiEntropyIntervalMillis) {
            throw r.invalid(TOMBSTONE_RETENTION_MILLIS, Long.toString(tombstoneRetentionMillis), "at least 3 x "
                    + ANTI_ENTROPY_INTERVAL_MILLIS + " (" + 3 * antiEntropyIntervalMillis + "): a removed key must "
                    + "stay known for a few anti-entropy rounds, or a peer that missed the remove puts it back");
        }
        unauthenticatedPeers = UnauthenticatedPeers.read(r, clusterSecret != null);
        if (batchMaxBytes > limits.maxFrameBytes()) {
            throw r.invalid(BATCH_MAX_BYTES, Integer.toString(batchMaxBytes),
                    "at most " + MAX_FRAME_BYTES + " (" + limits.maxFrameBytes() + ")");
        }
        // each dispatcher thread keeps up to two batches in flight to a peer: a bound below that refuses batches
        // a healthy peer is still taking (counted as failed, and the peer resyncs), over and over under load
        long inFlight = 2L * dispatcherThreads * (batchMaxBytes + BATCH_SLACK_BYTES);
        if (peerOutboundMaxBytes < inFlight) {
            throw r.invalid(PEER_OUTBOUND_MAX_BYTES, Long.toString(peerOutboundMaxBytes),
                    "at least 2 x " + DISPATCHER_THREADS + " x (" + BATCH_MAX_BYTES + " + 64 KB) = " + inFlight
                    + " bytes (two batches per dispatcher thread are in flight to each peer); raise it or lower "
                    + BATCH_MAX_BYTES);
        }
    }

    /**
     * Reads this node's settings from {@code reader}; the caller may read transport-specific properties from
     * the same reader and must then call {@link PropertyReader#rejectUnknown()}.
     *
     * @param manualPeersProperty the transport's name for the manual peer list ({@code peers}, {@code rmiUrls}…),
     *                            or {@code null} when the transport finds its members itself (JGroups)
     */
    public static NodeConfig read(PropertyReader reader, String manualPeersProperty) {
        return new NodeConfig(reader, manualPeersProperty);
    }

    public long queueMaxBytes() { return queueMaxBytes; }
    /** How often each peer's digests are compared; 0: never. */
    public long antiEntropyIntervalMillis() { return antiEntropyIntervalMillis; }
    /** At most this many bytes of entries are fetched from one peer for one cache in one round. */
    public long antiEntropyMaxBytes() { return antiEntropyMaxBytes; }
    /** How long a removed key's tombstone is kept, from its writer's stamp. */
    public long tombstoneRetentionMillis() { return tombstoneRetentionMillis; }
    /** Per cache, at most this many tombstones and versions of keys the cache does not hold. */
    public int maxTombstones() { return maxTombstones; }
    public int queueMaxEvents() { return queueMaxEvents; }
    public OverflowPolicy overflowPolicy() { return overflowPolicy; }
    public long overflowBlockMillis() { return overflowBlockMillis; }
    public int dispatcherThreads() { return dispatcherThreads; }
    public int batchMaxEvents() { return batchMaxEvents; }
    public int batchMaxBytes() { return batchMaxBytes; }
    public long batchLingerMillis() { return batchLingerMillis; }
    public long shutdownDrainMillis() { return shutdownDrainMillis; }
    /** How long the dispatcher waits for a peer to take a batch before counting it as failed for that peer. */
    public long sendTimeoutMillis() { return sendTimeoutMillis; }
    public CodecLimits limits() { return limits; }
    public boolean registerJmx() { return registerJmx; }
    /** Whether the node records the classes it sends and offers them as an {@code allowedClasses} setting. */
    public boolean learnAllowedClasses() { return learnAllowedClasses; }
    public DiscoveryConfig discovery() { return discovery; }
    /** Most bytes of batches waiting for one peer; past it, sends to that peer fail at once (counted). */
    public long peerOutboundMaxBytes() { return peerOutboundMaxBytes; }
    /** Which hosts may replicate with this node without authenticating ({@code unauthenticatedPeers}). */
    public UnauthenticatedPeers unauthenticatedPeers() { return unauthenticatedPeers; }

    /** The cluster secret peers prove ({@code clusterSecret}), or {@code null} when none is set. */
    public ClusterSecret clusterSecret() { return clusterSecret; }

    /**
     * {@code clusterSecret}: the secret itself, or {@code file:<path>} naming a file that holds it (its content,
     * trimmed). Messages never repeat the value.
     */
    private static ClusterSecret readSecret(PropertyReader r) {
        String v = r.string(CLUSTER_SECRET);
        if (v == null) {
            return null;
        }
        String text = v;
        String source = "its value";
        if (v.startsWith("file:")) {
            Path path = Paths.get(v.substring("file:".length()));
            source = "the file " + path;
            try {
                text = new String(Files.readAllBytes(path), StandardCharsets.UTF_8)
                        .trim();
            } catch (IOException | RuntimeException e) {
                throw new InvalidConfigurationException("ehrelay " + r.owner() + ": property '"
                        + CLUSTER_SECRET + "' names " + source + ", which cannot be read: " + e);
            }
        }
        try {
            return ClusterSecret.of(text);
        } catch (IllegalArgumentException e) {
            throw new InvalidConfigurationException("ehrelay " + r.owner() + ": property '"
                    + CLUSTER_SECRET + "': " + source + " is too short: " + e.getMessage()
                    + " (the same on every node; file:<path> reads it from a file)");
        }
    }
}
