package io.ehrelay.codec;

import java.io.OutputStream;
import java.util.Arrays;

/** A growable big-endian byte buffer for encoding. Not thread-safe; one per encode. */
public final class ByteSink extends OutputStream {

    private byte[] buf;
    private int pos;

    public ByteSink(int initialCapacity) {
        buf = new byte[Math.max(16, initialCapacity)];
    }

    private void ensure(int more) {
        int need = pos + more;
        if (need < 0) {
            throw new IllegalStateException("encoded value exceeds 2 GiB");
        }
        if (need > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(need, buf.length + (buf.length >> 1)));
        }
    }

    @Override
    public void write(int b) {
        ensure(1);
        buf[pos++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) {
        ensure(len);
        System.arraycopy(b, off, buf, pos, len);
        pos += len;
    }

    public void writeShort(int v) {
        ensure(2);
        buf[pos++] = (byte) (v >>> 8);
        buf[pos++] = (byte) v;
    }

    public void writeInt(int v) {
        ensure(4);
        buf[pos++] = (byte) (v >>> 24);
        buf[pos++] = (byte) (v >>> 16);
        buf[pos++] = (byte) (v >>> 8);
        buf[pos++] = (byte) v;
    }

    public void writeLong(long v) {
        writeInt((int) (v >>> 32));
        writeInt((int) v);
    }

    /** Overwrites four bytes at {@code at} (for length prefixes written after their content). */
    public void putInt(int at, int v) {
        buf[at] = (byte) (v >>> 24);
        buf[at + 1] = (byte) (v >>> 16);
        buf[at + 2] = (byte) (v >>> 8);
        buf[at + 3] = (byte) v;
    }

    public int position() {
        return pos;
    }

    /** Empties the sink for reuse, keeping its array. */
    public void reset() {
        pos = 0;
    }

    /** The internal array; valid bytes are {@code [0, position())}. */
    public byte[] array() {
        return buf;
    }

    /** The bytes written; the internal array itself, without a copy, when it was sized exactly. */
    public byte[] toByteArray() {
        return pos == buf.length ? buf : Arrays.copyOf(buf, pos);
    }
}
