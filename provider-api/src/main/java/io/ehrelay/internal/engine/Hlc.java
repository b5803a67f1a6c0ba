package io.ehrelay.internal.engine;

import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.spi.Clock;

/**
 * The node's hybrid logical clock: the stamps that order every replicated write of a key. A stamp is the wall
 * clock in milliseconds shifted left 16 bits plus a 16-bit counter; each stamp this node issues is greater than
 * every stamp it issued or {@linkplain #observe(long) saw} before, so a write made after another was received
 * is ordered after it whatever the clocks say (Kulkarni et al., "Logical Physical Clocks", 2014). Ties between
 * nodes are broken by the writer's origin id ({@link Version}). Thread-safe, lock-free.
 */
final class Hlc {

    /** Bits of the logical counter under the milliseconds. */
    static final int LOGICAL_BITS = 16;

    private final Clock clock;
    private final AtomicLong last = new AtomicLong();

    Hlc(Clock clock) {
        this.clock = clock;
    }

    /** A new stamp, greater than every stamp issued or observed so far. */
    long next() {
        long physical = clock.currentTimeMillis() << LOGICAL_BITS;
        while (true) {
            long prev = last.get();
            long next = Math.max(prev + 1, physical);
            if (last.compareAndSet(prev, next)) {
                return next;
            }
        }
    }

    /**
     * A stamp of another node was seen: later stamps issued here are greater.
     *
     * @return whether it is of a later millisecond than every stamp issued or seen before
     */
    boolean observe(long stamp) {
        while (true) {
            long prev = last.get();
            if (stamp <= prev) {
                return false;
            }
            if (last.compareAndSet(prev, stamp)) {
                return millisOf(stamp) > millisOf(prev);
            }
        }
    }

    /** How far {@code stamp} is ahead of this node's wall clock, in milliseconds (negative: behind). */
    long aheadMillis(long stamp) {
        return (stamp >>> LOGICAL_BITS) - clock.currentTimeMillis();
    }

    /** The wall-clock milliseconds of a stamp. */
    static long millisOf(long stamp) {
        return stamp >>> LOGICAL_BITS;
    }

    /** The smallest stamp of a wall-clock time: every stamp issued at or after it is not smaller. */
    static long stampAt(long millis) {
        return millis << LOGICAL_BITS;
    }
}
