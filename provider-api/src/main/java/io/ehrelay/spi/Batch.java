package io.ehrelay.spi;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An encoded event batch ready to send ({@link io.ehrelay.internal.codec.EventCodec} format), the same bytes for every
 * peer. The bytes may live in a (direct) buffer the dispatcher reuses once every peer's send completed: a
 * transport must not keep them after completing (or failing) the send's future. Immutable view.
 *
 * <p>When the transport {@linkplain Transport#sendsValuesByReference() asks for it}, the batch also names the
 * elements' own value arrays whose bytes it holds ({@link #pieces()}): a transport that keeps the bytes beyond
 * the send (a message kept until the peer acknowledges it) can then keep those arrays instead of a copy of them.
 */
public final class Batch {

    private final ByteBuffer data;
    /** The array {@link #data} is a view of, from {@link #arrayOffset}; {@code null} when it is in direct memory. */
    private final byte[] array;
    private final int arrayOffset;
    private final int eventCount;
    private final long deadlineNanos;
    /** The array copy, made by the first peer's send that asks and shared by the others (and deadline views). */
    private final AtomicReference<byte[]> copy;
    /** Where each referenced value's bytes start in {@code data}, ascending; {@code null}: none. */
    private final int[] valueAt;
    private final byte[][] values;
    private final int valueCount;
    /** The pieces, made by the first send that asks and shared as {@link #copy} is. */
    private final AtomicReference<Pieces> pieces;

    /** @param data the batch from its position to its limit; not modified */
    public Batch(ByteBuffer data, int eventCount) {
        this(data, eventCount, null, null, 0);
    }

    /**
     * A batch whose bytes hold, at {@code valueAt[i]} (relative to {@code data}'s position, ascending, not
     * overlapping), the bytes of {@code values[i]}, for {@code i < valueCount}: arrays that are not written while
     * the batch may be sent. The arrays given are the batch's from now on.
     *
     * @throws IllegalArgumentException when a reference lies outside the bytes, or references overlap
     */
    public Batch(ByteBuffer data, int eventCount, int[] valueAt, byte[][] values, int valueCount) {
        this(data.slice().asReadOnlyBuffer(), data.hasArray() ? data.array() : null,
                data.hasArray() ? data.arrayOffset() + data.position() : 0, eventCount, 0L, new AtomicReference<>(),
                valueCount == 0 ? null : valueAt, valueCount == 0 ? null : values, valueCount,
                new AtomicReference<>());
        int end = 0;
        for (int i = 0; i < valueCount; i++) {
            if (valueAt[i] < end || valueAt[i] + values[i].length > this.data.remaining()) {
                throw new IllegalArgumentException("value reference " + i + " at " + valueAt[i] + " (" + values[i].length
                        + " bytes) lies outside a batch of " + this.data.remaining() + " bytes or overlaps another");
            }
            end = valueAt[i] + values[i].length;
        }
    }

    private Batch(ByteBuffer readOnly, byte[] array, int arrayOffset, int eventCount, long deadlineNanos,
                  AtomicReference<byte[]> copy, int[] valueAt, byte[][] values, int valueCount,
                  AtomicReference<Pieces> pieces) {
        this.data = readOnly;
        this.array = array;
        this.arrayOffset = arrayOffset;
        this.eventCount = eventCount;
        this.deadlineNanos = deadlineNanos;
        this.copy = copy;
        this.valueAt = valueAt;
        this.values = values;
        this.valueCount = valueCount;
        this.pieces = pieces;
    }

    public Batch(byte[] data, int eventCount) {
        this(ByteBuffer.wrap(data), eventCount);
    }

    /**
     * The same batch with a deadline (on the scale of the node's {@link Clock#nanoTime()}): a synchronous
     * put's timeout, which transports that can bound a call use as its timeout.
     */
    public Batch withDeadline(long nanoTime) {
        return new Batch(data, array, arrayOffset, eventCount, nanoTime, copy, valueAt, values, valueCount, pieces);
    }

    /** The deadline, or {@code 0} for none. */
    public long deadlineNanos() {
        return deadlineNanos;
    }

    public int length() {
        return data.remaining();
    }

    public int eventCount() {
        return eventCount;
    }

    /** A fresh read-only view of the batch, for a (gathering) channel write. */
    public ByteBuffer buffer() {
        return data.duplicate();
    }

    /**
     * Writes the batch's bytes to {@code out}: in one call from the array that holds them when the batch is on
     * the heap (a transport that {@linkplain Transport#encodesOnHeap() asks for it}, or a batch made from an
     * array), otherwise copied out of direct memory through {@code scratch}, a part at a time. The batch is not
     * moved; {@code out} must not keep the array it is given.
     */
    public void writeTo(OutputStream out, byte[] scratch) throws IOException {
        if (array != null) {
            out.write(array, arrayOffset, data.remaining());
            return;
        }
        ByteBuffer d = data.duplicate();
        while (d.hasRemaining()) {
            int n = Math.min(d.remaining(), scratch.length);
            d.get(scratch, 0, n);
            out.write(scratch, 0, n);
        }
    }

    /**
     * The batch as an array, for transports that keep the bytes beyond the send: copied once, on the first call,
     * and the same array for every peer the batch goes to (a batch to 7 members costs one copy, not 7). Callers
     * read it and never write it.
     */
    public byte[] toByteArray() {
        byte[] out = copy.get();
        if (out == null) {
            out = new byte[data.remaining()];
            data.duplicate().get(out);
            if (!copy.compareAndSet(null, out)) {
                out = copy.get();
            }
        }
        return out;
    }

    /**
     * The batch as arrays to write one after the other, for transports that keep the bytes beyond the send: the
     * values the batch references as their own arrays, and every other byte copied once into one array. Made on
     * the first call and shared, as {@link #toByteArray()} is; a batch without references is one piece, that
     * array. Callers read the arrays and never write them.
     */
    public Pieces pieces() {
        Pieces out = pieces.get();
        if (out == null) {
            out = valueCount == 0 ? new Pieces(new byte[][] {toByteArray()}, new int[] {0}, new int[] {length()}, 1,
                    length()) : cut();
            if (!pieces.compareAndSet(null, out)) {
                out = pieces.get();
            }
        }
        return out;
    }

    private Pieces cut() {
        int total = data.remaining();
        int referenced = 0;
        for (int i = 0; i < valueCount; i++) {
            referenced += values[i].length;
        }
        byte[] rest = new byte[total - referenced];
        int max = 2 * valueCount + 1;
        byte[][] arrays = new byte[max][];
        int[] offsets = new int[max];
        int[] lengths = new int[max];
        int n = 0;
        int from = 0; // in the batch
        int restAt = 0;
        ByteBuffer src = data.duplicate();
        for (int i = 0; i <= valueCount; i++) {
            int to = i < valueCount ? valueAt[i] : total;
            if (to > from) {
                src.limit(to).position(from);
                src.get(rest, restAt, to - from);
                arrays[n] = rest;
                offsets[n] = restAt;
                lengths[n++] = to - from;
                restAt += to - from;
            }
            if (i < valueCount) {
                arrays[n] = values[i];
                offsets[n] = 0;
                lengths[n++] = values[i].length;
                from = to + values[i].length;
            }
        }
        return new Pieces(arrays, offsets, lengths, n, total);
    }

    /** A batch's bytes as slices of arrays, in order: see {@link #pieces()}. Immutable. */
    public static final class Pieces {

        private final byte[][] arrays;
        private final int[] offsets;
        private final int[] lengths;
        private final int count;
        private final int length;

        Pieces(byte[][] arrays, int[] offsets, int[] lengths, int count, int length) {
            this.arrays = arrays;
            this.offsets = offsets;
            this.lengths = lengths;
            this.count = count;
            this.length = length;
        }

        /** How many slices. */
        public int count() {
            return count;
        }

        /** The array of slice {@code i}: read it, never write it. */
        public byte[] array(int i) {
            return arrays[i];
        }

        public int offset(int i) {
            return offsets[i];
        }

        public int length(int i) {
            return lengths[i];
        }

        /** The batch's length: the slices' lengths summed. */
        public int length() {
            return length;
        }
    }
}
