package io.ehrelay.internal;

import java.util.concurrent.TimeUnit;

import io.ehrelay.spi.Clock;

/**
 * The wait between attempts to reach a peer that failed: none before the first failure, then {@code initialMillis}
 * after it, doubling with every further failure up to {@code maxMillis}; a success starts over. Time is read from
 * the injected {@link Clock}, so tests move it instead of sleeping. Every transport's per-peer sender uses one.
 * Thread-safe. Internal: not part of ehrelay's API, may change in any release.
 */
public final class Backoff {

    /** The first wait after a failure, unless the maximum is smaller. */
    public static final long DEFAULT_INITIAL_MILLIS = 100;

    private final Clock clock;
    private final long initialMillis;
    private final long maxMillis;
    /** The wait after the last failure; 0 after a success (or before any attempt). */
    private long delayMillis;
    /** When the next attempt may start ({@link Clock#nanoTime()} scale); only meaningful while {@link #waiting}. */
    private long retryAtNanos;
    private boolean waiting;

    /**
     * @param initialMillis the wait after the first failure (capped at {@code maxMillis}); at least 1
     * @param maxMillis     the longest wait; at least 1
     */
    public Backoff(Clock clock, long initialMillis, long maxMillis) {
        if (initialMillis < 1 || maxMillis < 1) {
            throw new IllegalArgumentException("backoff of " + initialMillis + " to " + maxMillis + " ms");
        }
        this.clock = clock;
        this.initialMillis = Math.min(initialMillis, maxMillis);
        this.maxMillis = maxMillis;
    }

    /** {@value #DEFAULT_INITIAL_MILLIS} ms doubling to {@code maxMillis}: the backoff of every ehrelay transport. */
    public static Backoff upTo(long maxMillis, Clock clock) {
        return new Backoff(clock, DEFAULT_INITIAL_MILLIS, maxMillis);
    }

    /** An attempt failed: the next one waits the doubled delay (the initial one after a success). Returns that delay. */
    public synchronized long failed() {
        delayMillis = delayMillis == 0 ? initialMillis : Math.min(maxMillis, delayMillis * 2);
        retryAtNanos = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
        waiting = true;
        return delayMillis;
    }

    /** An attempt succeeded: no wait, and the next failure waits the initial delay again. */
    public synchronized void succeeded() {
        delayMillis = 0;
        waiting = false;
    }

    /**
     * The peer showed it is up: the next attempt may start now. The delay is kept, so should that attempt fail
     * the wait still grows.
     */
    public synchronized void retryNow() {
        waiting = false;
    }

    /** Whether an attempt may start now. */
    public boolean mayTry() {
        return remainingNanos() == 0;
    }

    /** How long until an attempt may start; 0 when it may start now. */
    public synchronized long remainingNanos() {
        if (!waiting) {
            return 0;
        }
        long left = retryAtNanos - clock.nanoTime();
        if (left <= 0) {
            waiting = false;
            return 0;
        }
        return left;
    }

    /** {@link #remainingNanos()} in milliseconds, rounded up (so a positive wait never reads as 0). */
    public long remainingMillis() {
        long nanos = remainingNanos();
        return nanos == 0 ? 0 : TimeUnit.NANOSECONDS.toMillis(nanos + TimeUnit.MILLISECONDS.toNanos(1) - 1);
    }

    /** The wait after the last failure; 0 after a success. */
    public synchronized long delayMillis() {
        return delayMillis;
    }

    @Override
    public synchronized String toString() {
        return "Backoff[" + initialMillis + ".." + maxMillis + " ms, now " + delayMillis + " ms]";
    }
}
