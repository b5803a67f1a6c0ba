package io.ehrelay.internal;

/**
 * The memory that what peers are sending a node may hold at once, for all of them together
 * ({@code inboundBufferMaxBytes}): a receiver takes a frame's or a body's share before it reads it, and waits when
 * the node's share is spent, so many peers announcing large frames cannot make the node hold more than this
 * between them (the transport's read time-outs end those that stop sending, which frees theirs). Thread-safe.
 */
public final class InboundBudget {

    private final long max;
    private long used;

    public InboundBudget(long max) {
        this.max = max;
    }

    /** Takes {@code bytes}, waiting up to {@code waitMillis} for them to be free; {@code false} if they were not. */
    public synchronized boolean reserve(long bytes, long waitMillis) throws InterruptedException {
        long until = System.nanoTime() + waitMillis * 1_000_000L;
        while (used + bytes > max) {
            long left = until - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000L));
        }
        used += bytes;
        return true;
    }

    public synchronized void release(long bytes) {
        used -= bytes;
        notifyAll();
    }

    public synchronized long used() {
        return used;
    }

    public long max() {
        return max;
    }
}
