package io.ehrelay.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.spi.Clock;
import org.slf4j.Logger;

/**
 * Logs a WARN at most once per interval per key, and says how many similar messages it held back, so that a
 * peer that is down or a flood of hostile frames cannot flood the log. Thread-safe.
 */
public final class RateLimitedLog {

    private final Logger log;
    private final long intervalNanos;
    private final ConcurrentHashMap<String, Slot> slots = new ConcurrentHashMap<>();
    private final Clock clock;

    private static final class Slot {
        volatile long lastNanos;
        final AtomicLong suppressed = new AtomicLong();
        Slot(long lastNanos) {
            this.lastNanos = lastNanos;
        }
    }

    public RateLimitedLog(Logger log, long intervalMillis) {
        this(log, intervalMillis, Clock.SYSTEM);
    }

    public RateLimitedLog(Logger log, long intervalMillis, Clock clock) {
        this.log = log;
        this.clock = clock;
        this.intervalNanos = intervalMillis * 1_000_000L;
    }

    /** Logs {@code message} under {@code key} unless one was logged less than an interval ago. */
    public void warn(String key, String message, Object... args) {
        long held = admit(key);
        if (held >= 0) {
            log.warn(held == 0 ? message : message + " (" + held + " similar messages suppressed)", args);
        }
    }

    /** As {@link #warn}, at ERROR, with {@code failure}'s stack trace. */
    public void error(String key, String message, Throwable failure) {
        long held = admit(key);
        if (held >= 0) {
            log.error(held == 0 ? message : message + " (" + held + " similar messages suppressed)", failure);
        }
    }

    /** How many messages under {@code key} were held back since the last one logged, or -1 to hold this one. */
    private long admit(String key) {
        long now = clock.nanoTime();
        Slot slot = slots.get(key);
        if (slot == null) {
            Slot fresh = new Slot(now);
            slot = slots.putIfAbsent(key, fresh);
            if (slot == null) {
                return 0;
            }
        }
        long last = slot.lastNanos;
        if (now - last >= intervalNanos) {
            synchronized (slot) {
                if (slot.lastNanos == last) {
                    slot.lastNanos = now;
                    return slot.suppressed.getAndSet(0);
                }
            }
        }
        slot.suppressed.incrementAndGet();
        return -1;
    }
}
