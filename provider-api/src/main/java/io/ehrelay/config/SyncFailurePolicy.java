package io.ehrelay.config;

/** What a synchronous replicator does when a peer does not acknowledge within {@code syncTimeoutMillis}. */
public enum SyncFailurePolicy {
    /** Throw a {@link net.sf.ehcache.CacheException} naming the peers that failed, after counting the failure. */
    THROW,
    /** Count the failure, log a rate-limited WARN naming the peers, and return normally. */
    COUNT
}
