package io.ehrelay.spi;

import java.nio.ByteBuffer;

/**
 * An encoded event batch ready to send ({@link io.ehrelay.codec.EventCodec} format), the same bytes for every
 * peer. The bytes may live in a (direct) buffer the dispatcher reuses once every peer's send completed: a
 * transport must not keep them after completing (or failing) the send's future. Immutable view.
 */
public final class Batch {

    private final ByteBuffer data;
    private final int eventCount;

    /** @param data the batch from its position to its limit; not modified */
    public Batch(ByteBuffer data, int eventCount) {
        this.data = data.slice().asReadOnlyBuffer();
        this.eventCount = eventCount;
    }

    public Batch(byte[] data, int eventCount) {
        this(ByteBuffer.wrap(data), eventCount);
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

    /** A copy of the batch, for transports that keep the bytes beyond the send. */
    public byte[] toByteArray() {
        byte[] out = new byte[data.remaining()];
        data.duplicate().get(out);
        return out;
    }
}
