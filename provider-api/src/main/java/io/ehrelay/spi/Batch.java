package io.ehrelay.spi;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * An encoded event batch ready to send ({@link io.ehrelay.codec.EventCodec} format), the same bytes for every
 * peer: {@code data[0, length)}. The array may be a buffer the dispatcher reuses once every peer's send
 * completed: a transport must not keep it after completing (or failing) the send's future. Immutable view.
 */
public final class Batch {

    private final byte[] data;
    private final int length;
    private final int eventCount;

    public Batch(byte[] data, int length, int eventCount) {
        if (length < 0 || length > data.length) {
            throw new IllegalArgumentException("length " + length + " outside the array");
        }
        this.data = data;
        this.length = length;
        this.eventCount = eventCount;
    }

    public int length() {
        return length;
    }

    public int eventCount() {
        return eventCount;
    }

    /** A read-only buffer over the batch, for a (gathering) channel write. */
    public ByteBuffer buffer() {
        return ByteBuffer.wrap(data, 0, length).asReadOnlyBuffer();
    }

    /** A copy of the batch, for transports that keep the bytes beyond the send. */
    public byte[] toByteArray() {
        return Arrays.copyOf(data, length);
    }
}
