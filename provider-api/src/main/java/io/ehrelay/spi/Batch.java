package io.ehrelay.spi;

import java.nio.ByteBuffer;

/**
 * An encoded event batch ready to send: a header part followed by one part per event, so that stream
 * transports can write it with one gathering write and every peer gets the same bytes. Immutable; the parts
 * must not be modified.
 */
public final class Batch {

    private final byte[][] parts;
    private final int length;
    private final int eventCount;

    public Batch(byte[][] parts, int eventCount) {
        this.parts = parts;
        this.eventCount = eventCount;
        long n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("batch larger than 2 GiB");
        }
        this.length = (int) n;
    }

    /** Total bytes of all parts. */
    public int length() {
        return length;
    }

    public int eventCount() {
        return eventCount;
    }

    public int partCount() {
        return parts.length;
    }

    public byte[] part(int i) {
        return parts[i];
    }

    /** Fresh read-only buffers over the parts, for a gathering write. */
    public ByteBuffer[] buffers() {
        ByteBuffer[] out = new ByteBuffer[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = ByteBuffer.wrap(parts[i]).asReadOnlyBuffer();
        }
        return out;
    }

    /** The batch as one contiguous array (a copy), for transports that send a single byte array. */
    public byte[] toByteArray() {
        if (parts.length == 1) {
            return parts[0];
        }
        byte[] out = new byte[length];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }
}
