package io.ehrelay.internal;

import java.lang.ref.SoftReference;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Iterator;

import io.ehrelay.spi.Clock;

/**
 * The memory that what peers are sending a node may hold at once, for all of them together
 * ({@code inboundBufferMaxBytes}): a receiver takes a frame's or a body's share before it reads it, and waits when
 * the node's share is spent, so many peers announcing large frames cannot make the node hold more than this
 * between them (the transport's read time-outs end those that stop sending, which frees theirs). The shares count
 * what frames and batches hold; a batch read into a reused array ({@link #borrow}) may sit in up to 1/8 more, and a
 * frame parsed at once ({@link #borrowForParse}) in any array kept. Arrays of applied batches and parsed frames are
 * kept for the next ones, as many as the budget itself (at most 64 MB): while peers keep sending, the batches
 * waiting to be applied hold up to that much, and a pool that kept less made most of them anew. They are kept
 * softly: an array not reused for a while is the collector's to take back when the heap runs short. Thread-safe.
 */
public final class InboundBudget {

    /** Arrays for batches are made in multiples of this, so that one fits the next batches of about its size. */
    static final int ARRAY_STEP = 4 * 1024;
    /** The most bytes of arrays kept for reuse: the budget, at most this. */
    static final long POOL_MAX_BYTES = 64L << 20;

    /** Batches up to this size get an array of their own (cheap to allocate); larger ones a reused one. */
    static final int REUSED_FROM = 64 * 1024;

    private final long max;
    private final long poolMax;
    private long used;
    /**
     * Arrays given back after their batch was applied, for the next batches ({@link #array}), oldest first; bounded
     * by poolMax, counting those the collector took back until they are found.
     */
    private final ArrayDeque<Kept> pool = new ArrayDeque<>();
    private long pooled;
    private final Clock clock;

    /** @param clock the node's clock: how long {@link #reserve} waits */
    public InboundBudget(long max, Clock clock) {
        this.max = max;
        this.clock = clock;
        this.poolMax = Math.min(POOL_MAX_BYTES, max);
    }

    /**
     * An array to read a batch of {@code length} bytes into: for a batch over {@value #REUSED_FROM} bytes one reused
     * from batches already applied ({@link #array}), given back by {@link Borrowed#giveBack()}; for a smaller one an
     * array of its own. The share of the budget is taken separately ({@link #reserve}).
     */
    public Borrowed borrow(int length) {
        return length > REUSED_FROM ? new Borrowed(this, array(length), length) : own(length);
    }

    /** An array of its own for a batch of {@code length} bytes, outside any pool (giving it back does nothing). */
    public static Borrowed own(int length) {
        return new Borrowed(null, new byte[length], length);
    }

    /**
     * An array to read a frame of {@code length} bytes into that is parsed at once and given back right after: for
     * a frame over {@value #REUSED_FROM} bytes the shortest array kept for reuse that holds it, however much longer
     * (it only moves from the arrays kept to the one being parsed), else a new one; for a smaller frame an array of
     * its own. A batch may stay in such an array past the parse only when it {@link Borrowed#fits}.
     */
    public Borrowed borrowForParse(int length) {
        return length > REUSED_FROM ? new Borrowed(this, array(length, false), length) : own(length);
    }

    /**
     * A batch's array from {@link #borrow}: the batch is its first {@link #length()} bytes (a reused array may be
     * longer, and what lies past them is an earlier batch's). Given back once, when nothing reads the batch any
     * more; after that it holds nothing. Thread-safe.
     */
    public static final class Borrowed {
        private final InboundBudget from;
        private final int length;
        private byte[] array;

        private Borrowed(InboundBudget from, byte[] array, int length) {
            this.from = from;
            this.array = array;
            this.length = length;
        }

        /** The array to read the batch into (its first {@link #length()} bytes). */
        public synchronized byte[] array() {
            return array;
        }

        public int length() {
            return length;
        }

        /**
         * Whether the array is at most an eighth longer than {@link #length()}: what {@link #borrow} gives, and what
         * a batch held past its frame's parse must sit in (the bounds count its length).
         */
        public synchronized boolean fits() {
            return array != null && array.length - length <= length / 8;
        }

        /** The batch: the array's first {@link #length()} bytes. */
        public synchronized ByteBuffer batch() {
            return ByteBuffer.wrap(array, 0, length);
        }

        /** Gives the array back for a later batch (a reused one) or to the garbage collector; once. */
        public synchronized void giveBack() {
            if (array != null && from != null) {
                from.recycle(array);
            }
            array = null;
        }
    }

    /**
     * An array of at least {@code length} bytes to read a batch into: one given back by {@link #recycle} when one
     * fits — at most an eighth longer — else a new one (rounded up to {@value #ARRAY_STEP} bytes). So an array holds
     * at most 1/8 more than the batch whose length the bounds count ({@link #reserve}, a receiver's queue). What
     * lies past {@code length} in a reused array is an earlier batch's: read only the first {@code length} bytes.
     */
    byte[] array(int length) {
        return array(length, true);
    }

    /** As {@link #array(int)}; with {@code fit} false, the shortest array kept that holds {@code length} bytes. */
    private byte[] array(int length, boolean fit) {
        synchronized (pool) {
            byte[] best = null;
            Kept bestKept = null;
            for (Iterator<Kept> it = pool.iterator(); it.hasNext();) {
                Kept k = it.next();
                byte[] a = k.get();
                if (a == null) { // taken back by the collector
                    it.remove();
                    pooled -= k.length;
                    continue;
                }
                if (a.length < length) {
                    continue;
                }
                if (fit ? a.length - length <= length / 8 : best == null || a.length < best.length) {
                    best = a;
                    bestKept = k;
                    if (fit) {
                        break;
                    }
                }
            }
            if (best != null) {
                pool.removeFirstOccurrence(bestKept); // references compare by identity
                pooled -= best.length;
                return best;
            }
        }
        long rounded = ((long) length + ARRAY_STEP - 1) / ARRAY_STEP * ARRAY_STEP;
        return new byte[(int) Math.min(Integer.MAX_VALUE - 8, Math.max(length, rounded))];
    }

    /**
     * Gives back an array from {@link #array} once nothing reads its batch any more (applied, refused or dropped);
     * kept (softly) for the next batch while the arrays kept hold at most the budget (and at most
     * {@value #POOL_MAX_BYTES} bytes), the oldest dropped first.
     */
    void recycle(byte[] array) {
        if (array == null || array.length > poolMax) {
            return;
        }
        synchronized (pool) {
            while (pooled + array.length > poolMax && !pool.isEmpty()) {
                pooled -= pool.removeFirst().length;
            }
            pool.addLast(new Kept(array));
            pooled += array.length;
        }
    }

    /** An array kept for reuse, which the collector may take back; its length stays for the count. */
    private static final class Kept extends SoftReference<byte[]> {
        final int length;

        Kept(byte[] array) {
            super(array);
            this.length = array.length;
        }
    }

    /** For tests: what the collector does to arrays kept when the heap runs short (the count stays until looked up). */
    void clearSoftly() {
        synchronized (pool) {
            for (Kept k : pool) {
                k.clear();
            }
        }
    }

    /** Bytes of arrays kept for reuse (those the collector took back count until a lookup finds them gone). */
    long pooled() {
        synchronized (pool) {
            return pooled;
        }
    }

    /** Takes {@code bytes}, waiting up to {@code waitMillis} for them to be free; {@code false} if they were not. */
    public synchronized boolean reserve(long bytes, long waitMillis) throws InterruptedException {
        long until = clock.nanoTime() + waitMillis * 1_000_000L;
        while (used + bytes > max) {
            long left = until - clock.nanoTime();
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
