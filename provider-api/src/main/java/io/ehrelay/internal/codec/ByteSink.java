package io.ehrelay.internal.codec;

import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * A growable big-endian byte buffer for encoding, on the heap or in direct memory. The dispatcher encodes
 * batches into a direct sink it reuses, so that a socket transport writes them without another copy. Not
 * thread-safe; one writer at a time.
 */
public final class ByteSink extends OutputStream {

    private ByteBuffer buf;
    private final boolean direct;

    /** A heap sink. */
    public ByteSink(int initialCapacity) {
        this(initialCapacity, false);
    }

    private ByteSink(int initialCapacity, boolean direct) {
        this.direct = direct;
        this.buf = allocate(Math.max(16, initialCapacity));
    }

    /** A sink in direct memory, for buffers that are reused and written to channels. */
    public static ByteSink direct(int initialCapacity) {
        return new ByteSink(initialCapacity, true);
    }

    private ByteBuffer allocate(int capacity) {
        return direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
    }

    private void ensure(int more) {
        int need = buf.position() + more;
        if (need < 0) {
            throw new IllegalStateException("encoded value exceeds 2 GiB");
        }
        if (need > buf.capacity()) {
            ByteBuffer bigger = allocate(Math.max(need, buf.capacity() + (buf.capacity() >> 1)));
            buf.flip();
            bigger.put(buf);
            buf = bigger;
        }
    }

    @Override
    public void write(int b) {
        ensure(1);
        buf.put((byte) b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
        ensure(len);
        buf.put(b, off, len);
    }

    public void writeShort(int v) {
        ensure(2);
        buf.putShort((short) v);
    }

    public void writeInt(int v) {
        ensure(4);
        buf.putInt(v);
    }

    public void writeLong(long v) {
        ensure(8);
        buf.putLong(v);
    }

    /** Overwrites four bytes at {@code at} (for length prefixes written after their content). */
    public void putInt(int at, int v) {
        buf.putInt(at, v);
    }

    /** Overwrites eight bytes at {@code at}. */
    public void putLong(int at, long v) {
        buf.putLong(at, v);
    }

    /** Overwrites one byte at {@code at}. */
    public void putByte(int at, int v) {
        buf.put(at, (byte) v);
    }

    public int position() {
        return buf.position();
    }

    /** Appends the bytes between {@code src}'s position and limit (advancing its position). */
    public void write(ByteBuffer src) {
        ensure(src.remaining());
        buf.put(src);
    }

    /** Forgets what was written after {@code position} (e.g. an event that failed half-way). */
    public void truncate(int position) {
        if (position < 0 || position > buf.position()) {
            throw new IllegalArgumentException("truncate to " + position + " of " + buf.position());
        }
        buf.position(position);
    }

    /** The CRC-32 of the bytes written from {@code from} to {@code to}. */
    public int crc(int from, int to) {
        return ByteSource.crc(buf, from, to);
    }

    /** Empties the sink for reuse, keeping its memory. */
    public void reset() {
        buf.clear();
    }

    /** A read-only view of the bytes written so far, positioned at 0; valid until the next write or reset. */
    public ByteBuffer view() {
        return written().asReadOnlyBuffer();
    }

    /** The bytes written so far, positioned at 0, sharing this sink's memory. */
    private ByteBuffer written() {
        ByteBuffer v = buf.duplicate();
        v.flip();
        return v;
    }

    /**
     * As {@link #view()}, except that a heap sink's view is writable, so that a {@link io.ehrelay.spi.Batch} made of
     * it can hand its array to a stream in one call ({@code Batch.writeTo}); the batch reads it and never writes it.
     */
    public ByteBuffer batchView() {
        return direct ? view() : written();
    }

    /** The bytes written; a heap sink's own array, without a copy, when it was sized exactly. */
    public byte[] toByteArray() {
        if (!direct && buf.position() == buf.capacity()) {
            return buf.array();
        }
        if (!direct) {
            return Arrays.copyOf(buf.array(), buf.position());
        }
        byte[] out = new byte[buf.position()];
        ByteBuffer view = buf.duplicate();
        view.flip();
        view.get(out);
        return out;
    }
}
