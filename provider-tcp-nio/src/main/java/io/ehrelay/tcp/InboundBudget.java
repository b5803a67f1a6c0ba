package io.ehrelay.tcp;

/**
 * The receive-buffer memory all inbound connections of a node may hold beyond each one's first 64 KiB
 * ({@code inboundBufferMaxBytes}): a peer announcing a large frame takes its share as the bytes arrive, and waits
 * when the node's share is spent, so many connections announcing large frames cannot hold more than this between
 * them (the stall watchdog closes those that stop sending mid-frame, which frees theirs). Thread-safe.
 */
final class InboundBudget {

    private final long max;
    private long used;

    InboundBudget(long max) {
        this.max = max;
    }

    /** Takes {@code bytes}, waiting up to {@code waitMillis} for them to be free; {@code false} if they were not. */
    synchronized boolean reserve(long bytes, long waitMillis) throws InterruptedException {
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

    synchronized void release(long bytes) {
        used -= bytes;
        notifyAll();
    }

    synchronized long used() {
        return used;
    }

    long max() {
        return max;
    }
}
