package io.ehrelay.internal.config;

import java.util.Properties;

/**
 * Immutable bootstrap settings, parsed from the properties of a {@code bootstrapCacheLoaderFactory}.
 * Names and defaults follow Ehcache's stock {@code RMIBootstrapCacheLoaderFactory}.
 */
public final class BootstrapConfig {

    public static final String BOOTSTRAP_ASYNCHRONOUSLY = "bootstrapAsynchronously";
    public static final String MAXIMUM_CHUNK_SIZE_BYTES = "maximumChunkSizeBytes";
    public static final String BOOTSTRAP_TIMEOUT_MILLIS = "bootstrapTimeoutMillis";

    public static final int DEFAULT_MAXIMUM_CHUNK_SIZE_BYTES = 5_000_000;
    public static final int MIN_CHUNK_SIZE_BYTES = 5_000;
    public static final int MAX_CHUNK_SIZE_BYTES = 100_000_000;
    public static final long DEFAULT_BOOTSTRAP_TIMEOUT_MILLIS = 120_000;

    private final boolean asynchronous;
    private final int maximumChunkSizeBytes;
    private final long timeoutMillis;

    private BootstrapConfig(PropertyReader r) {
        asynchronous = r.bool(BOOTSTRAP_ASYNCHRONOUSLY, true);
        maximumChunkSizeBytes = r.intIn(MAXIMUM_CHUNK_SIZE_BYTES, DEFAULT_MAXIMUM_CHUNK_SIZE_BYTES,
                MIN_CHUNK_SIZE_BYTES, MAX_CHUNK_SIZE_BYTES);
        timeoutMillis = r.longIn(BOOTSTRAP_TIMEOUT_MILLIS, DEFAULT_BOOTSTRAP_TIMEOUT_MILLIS, 1, 86_400_000);
    }

    public static BootstrapConfig parse(String owner, Properties properties) {
        PropertyReader reader = new PropertyReader(owner, properties);
        BootstrapConfig config = new BootstrapConfig(reader);
        reader.rejectUnknown();
        return config;
    }

    public boolean asynchronous() { return asynchronous; }
    public int maximumChunkSizeBytes() { return maximumChunkSizeBytes; }
    /** How long one attempt to load from one peer may take before the next peer is tried. */
    public long timeoutMillis() { return timeoutMillis; }
}
