package io.ehrelay.config;

/** What the asynchronous replication queue does with a new event when it is full. */
public enum OverflowPolicy {
    /** Discard the new event, count it in {@code dropped} and log a rate-limited WARN. Never blocks the writer. */
    DROP,
    /** Block the writing thread up to {@code overflowBlockMillis}; if still full, drop and count as with DROP. */
    BLOCK
}
