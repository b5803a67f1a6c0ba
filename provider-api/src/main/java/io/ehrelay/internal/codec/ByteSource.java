package io.ehrelay.internal.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

import io.ehrelay.spi.MalformedFrameException;

/**
 * A bounds-checked big-endian reader over a byte range (heap or direct memory). Every read checks the
 * remaining length first, so a length field in hostile input can never make the decoder allocate more than
 * the frame it already holds. Not thread-safe.
 */
public final class ByteSource {

    /** One CRC-32 per thread: the decoder hashes every key, the encoder every key and value. */
    private static final ThreadLocal<CRC32> CRC = ThreadLocal.withInitial(CRC32::new);

    private final ByteBuffer buf;

    /** Reads {@code buffer}'s bytes from its position to its limit; the buffer itself is not moved. */
    public ByteSource(ByteBuffer buffer) {
        this.buf = buffer.slice();
    }

    public ByteSource(byte[] bytes, int offset, int length) {
        if (offset < 0 || length < 0 || offset > bytes.length - length) {
            throw new IllegalArgumentException("range outside buffer");
        }
        this.buf = ByteBuffer.wrap(bytes, offset, length).slice();
    }

    public int remaining() {
        return buf.remaining();
    }

    /**
     * Narrows reading to the next {@code n} bytes (an event or a membership entry, read in place: no slice of
     * its own); every read then ends at their end. {@link #endWindow} skips what is left of them and restores
     * the wider limit.
     *
     * @return the limit to give back to {@link #endWindow}
     */
    public int window(int n, String what) throws MalformedFrameException {
        need(n, what);
        int outer = buf.limit();
        buf.limit(buf.position() + n);
        return outer;
    }

    /** Ends the window {@link #window} opened: reading goes on after its last byte, to {@code outer}. */
    public void endWindow(int outer) {
        buf.position(buf.limit());
        buf.limit(outer);
    }

    private void need(int n, String what) throws MalformedFrameException {
        if (n < 0 || n > buf.remaining()) {
            throw new MalformedFrameException("truncated frame: " + what + " needs " + n + " bytes, "
                    + buf.remaining() + " left");
        }
    }

    public int readByte(String what) throws MalformedFrameException {
        need(1, what);
        return buf.get() & 0xff;
    }

    public int readShort(String what) throws MalformedFrameException {
        need(2, what);
        return buf.getShort() & 0xffff;
    }

    public int readInt(String what) throws MalformedFrameException {
        need(4, what);
        return buf.getInt();
    }

    public long readLong(String what) throws MalformedFrameException {
        need(8, what);
        return buf.getLong();
    }

    /** Reads a length field and checks that that many bytes follow. */
    public int readLength(String what) throws MalformedFrameException {
        if (buf.remaining() < 4) {
            need(4, what + " length"); // the message is made only when it is thrown: this runs twice per event
        }
        int n = buf.getInt();
        if (n < 0) {
            throw new MalformedFrameException("negative length " + n + " for " + what);
        }
        need(n, what);
        return n;
    }

    public byte[] readBytes(int n, String what) throws MalformedFrameException {
        need(n, what);
        byte[] out = new byte[n];
        buf.get(out);
        return out;
    }

    /**
     * Reads {@code n} bytes of UTF-8; when they are the bytes of {@code previousUtf8}, returns {@code previous}
     * without decoding (a batch names the same cache event after event).
     */
    public String readUtf8(int n, String what, byte[] previousUtf8, String previous) throws MalformedFrameException {
        need(n, what);
        if (previous != null && previousUtf8.length == n) {
            int at = buf.position();
            boolean same = true;
            for (int i = 0; i < n; i++) {
                if (buf.get(at + i) != previousUtf8[i]) {
                    same = false;
                    break;
                }
            }
            if (same) {
                buf.position(at + n);
                return previous;
            }
        }
        return readUtf8(n, what);
    }

    public String readUtf8(int n, String what) throws MalformedFrameException {
        need(n, what);
        if (buf.hasArray()) {
            String s = new String(buf.array(), buf.arrayOffset() + buf.position(), n, StandardCharsets.UTF_8);
            buf.position(buf.position() + n);
            return s;
        }
        return new String(readBytes(n, what), StandardCharsets.UTF_8);
    }

    /** The read position, from the start of this source. */
    public int position() {
        return buf.position();
    }

    /** The CRC-32 of this source's bytes from {@code from} to {@code to} (positions), not moving it. */
    public int crc(int from, int to) {
        return crc(buf, from, to);
    }

    /** This thread's CRC-32, reset. */
    static CRC32 threadCrc() {
        CRC32 crc = CRC.get();
        crc.reset();
        return crc;
    }

    /** The CRC-32 of {@code buf}'s bytes from {@code from} to {@code to} (positions), not moving it. */
    static int crc(ByteBuffer buf, int from, int to) {
        CRC32 crc = threadCrc();
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + from, to - from);
        } else {
            // the range is read in place (no duplicate per key hashed), then the buffer is put back as it was
            int position = buf.position();
            int limit = buf.limit();
            buf.limit(to);
            buf.position(from);
            crc.update(buf);
            buf.limit(limit);
            buf.position(position);
        }
        return (int) crc.getValue();
    }

    public void skip(int n, String what) throws MalformedFrameException {
        need(n, what);
        buf.position(buf.position() + n);
    }
}
