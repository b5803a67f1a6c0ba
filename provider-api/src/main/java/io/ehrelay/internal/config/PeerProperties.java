package io.ehrelay.internal.config;

/**
 * The names of ehrelay's own per-peer properties that every transport shares, so that one concept has one name
 * (stock Ehcache names, such as RMI's listener {@code socketTimeoutMillis}, stay as they are).
 */
public final class PeerProperties {

    /** The longest wait between attempts to reach a peer that failed (the backoff starts at 100 ms, doubles). */
    public static final String RETRY_MAX_MILLIS = "retryMaxMillis";
    /** How long one call (or request) to a peer may take before it fails. */
    public static final String CALL_TIMEOUT_MILLIS = "callTimeoutMillis";
    /** How long opening a connection to a peer may take. */
    public static final String CONNECT_TIMEOUT_MILLIS = "connectTimeoutMillis";

    private PeerProperties() {
    }
}
