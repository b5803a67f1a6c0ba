package io.ehrelay.internal.config;

import java.util.Properties;

import io.ehrelay.config.SyncFailurePolicy;

/**
 * Immutable per-cache replicator settings, parsed from the properties of a {@code cacheEventListenerFactory}.
 * Property names and defaults are those of Ehcache's stock {@code RMICacheReplicatorFactory}, plus ehrelay's own.
 */
public final class ReplicatorConfig {

    public static final String REPLICATE_PUTS = "replicatePuts";
    public static final String REPLICATE_PUTS_VIA_COPY = "replicatePutsViaCopy";
    public static final String REPLICATE_UPDATES = "replicateUpdates";
    public static final String REPLICATE_UPDATES_VIA_COPY = "replicateUpdatesViaCopy";
    public static final String REPLICATE_REMOVALS = "replicateRemovals";
    public static final String REPLICATE_ASYNCHRONOUSLY = "replicateAsynchronously";
    public static final String ASYNC_INTERVAL_MILLIS = "asynchronousReplicationIntervalMillis";
    public static final String ASYNC_MAX_BATCH_SIZE = "asynchronousReplicationMaximumBatchSize";
    public static final String SYNC_TIMEOUT_MILLIS = "syncTimeoutMillis";
    public static final String SYNC_FAILURE_POLICY = "syncFailurePolicy";

    public static final int DEFAULT_ASYNC_INTERVAL_MILLIS = 1000;
    public static final int DEFAULT_ASYNC_MAX_BATCH_SIZE = 1000;
    public static final long DEFAULT_SYNC_TIMEOUT_MILLIS = 5000;

    private final boolean replicatePuts;
    private final boolean replicatePutsViaCopy;
    private final boolean replicateUpdates;
    private final boolean replicateUpdatesViaCopy;
    private final boolean replicateRemovals;
    private final boolean asynchronous;
    private final int asyncIntervalMillis;
    private final int asyncMaxBatchSize;
    private final long syncTimeoutMillis;
    private final SyncFailurePolicy syncFailurePolicy;

    private ReplicatorConfig(PropertyReader r) {
        replicatePuts = r.bool(REPLICATE_PUTS, true);
        replicatePutsViaCopy = r.bool(REPLICATE_PUTS_VIA_COPY, true);
        replicateUpdates = r.bool(REPLICATE_UPDATES, true);
        replicateUpdatesViaCopy = r.bool(REPLICATE_UPDATES_VIA_COPY, true);
        replicateRemovals = r.bool(REPLICATE_REMOVALS, true);
        asynchronous = r.bool(REPLICATE_ASYNCHRONOUSLY, true);
        asyncIntervalMillis = r.intIn(ASYNC_INTERVAL_MILLIS, DEFAULT_ASYNC_INTERVAL_MILLIS, 10, Integer.MAX_VALUE);
        asyncMaxBatchSize = r.intIn(ASYNC_MAX_BATCH_SIZE, DEFAULT_ASYNC_MAX_BATCH_SIZE, 1, Integer.MAX_VALUE);
        syncTimeoutMillis = r.longIn(SYNC_TIMEOUT_MILLIS, DEFAULT_SYNC_TIMEOUT_MILLIS, 1, 3_600_000);
        syncFailurePolicy = r.choice(SYNC_FAILURE_POLICY, SyncFailurePolicy.THROW, SyncFailurePolicy.class);
    }

    /** Parses and validates; unknown properties are rejected. */
    public static ReplicatorConfig parse(String owner, Properties properties) {
        PropertyReader reader = new PropertyReader(owner, properties);
        ReplicatorConfig config = new ReplicatorConfig(reader);
        reader.rejectUnknown();
        return config;
    }

    public boolean replicatePuts() { return replicatePuts; }
    public boolean replicatePutsViaCopy() { return replicatePutsViaCopy; }
    public boolean replicateUpdates() { return replicateUpdates; }
    public boolean replicateUpdatesViaCopy() { return replicateUpdatesViaCopy; }
    public boolean replicateRemovals() { return replicateRemovals; }
    public boolean asynchronous() { return asynchronous; }
    /** Accepted for compatibility; ehrelay sends as soon as events are queued (see {@code batchLingerMillis}). */
    public int asyncIntervalMillis() { return asyncIntervalMillis; }
    /** Accepted for compatibility; batches are formed per CacheManager and bounded by {@code batchMaxEvents}. */
    public int asyncMaxBatchSize() { return asyncMaxBatchSize; }
    public long syncTimeoutMillis() { return syncTimeoutMillis; }
    public SyncFailurePolicy syncFailurePolicy() { return syncFailurePolicy; }
}
