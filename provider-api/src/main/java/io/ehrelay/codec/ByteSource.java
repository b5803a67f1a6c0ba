package io.ehrelay.codec;

import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked big-endian reader over a byte range. Every read checks the remaining length first, so a
 * length field in hostile input can never make the decoder allocate more than the frame it already holds.
 * Not thread-safe.
 */
public final class ByteSource {

    private final byte[] buf;
    private int pos;
    private final int end;

    public ByteSource(byte[] buf, int offset, int length) {
        if (offset < 0 || length < 0 || offset > buf.length - length) {
            throw new IllegalArgumentException("range outside buffer");
        }
        this.buf = buf;
        this.pos = offset;
        this.end = offset + length;
    }

    public int remaining() {
        return end - pos;
    }

    public int position() {
        return pos;
    }

    public byte[] array() {
        return buf;
    }

    private void need(int n, String what) throws MalformedFrameException {
        if (n < 0 || n > end - pos) {
            throw new MalformedFrameException("truncated frame: " + what + " needs " + n + " bytes, "
                    + (end - pos) + " left");
        }
    }

    public int readByte(String what) throws MalformedFrameException {
        need(1, what);
        return buf[pos++] & 0xff;
    }

    public int readShort(String what) throws MalformedFrameException {
        need(2, what);
        int v = ((buf[pos] & 0xff) << 8) | (buf[pos + 1] & 0xff);
        pos += 2;
        return v;
    }

    public int readInt(String what) throws MalformedFrameException {
        need(4, what);
        int v = ((buf[pos] & 0xff) << 24) | ((buf[pos + 1] & 0xff) << 16) | ((buf[pos + 2] & 0xff) << 8)
                | (buf[pos + 3] & 0xff);
        pos += 4;
        return v;
    }

    public long readLong(String what) throws MalformedFrameException {
        long hi = readInt(what) & 0xffffffffL;
        long lo = readInt(what) & 0xffffffffL;
        return (hi << 32) | lo;
    }

    /** Reads a length field and checks that that many bytes follow. */
    public int readLength(String what) throws MalformedFrameException {
        int n = readInt(what + " length");
        if (n < 0) {
            throw new MalformedFrameException("negative length " + n + " for " + what);
        }
        need(n, what);
        return n;
    }

    public byte[] readBytes(int n, String what) throws MalformedFrameException {
        need(n, what);
        byte[] out = new byte[n];
        System.arraycopy(buf, pos, out, 0, n);
        pos += n;
        return out;
    }

    public String readUtf8(int n, String what) throws MalformedFrameException {
        need(n, what);
        String s = new String(buf, pos, n, StandardCharsets.UTF_8);
        pos += n;
        return s;
    }

    public void skip(int n, String what) throws MalformedFrameException {
        need(n, what);
        pos += n;
    }
}
