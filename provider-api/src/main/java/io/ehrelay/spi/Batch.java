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
    private final long deadlineNanos;

    /** @param data the batch from its position to its limit; not modified */
    public Batch(ByteBuffer data, int eventCount) {
        this(data.slice().asReadOnlyBuffer(), eventCount, 0L);
    }

    private Batch(ByteBuffer readOnly, int eventCount, long deadlineNanos) {
        this.data = readOnly;
        this.eventCount = eventCount;
        this.deadlineNanos = deadlineNanos;
    }

    /**
     * The same batch with a deadline ({@link System#nanoTime()} scale): a synchronous put's timeout, which
     * transports that can bound a call use as its timeout.
     */
    public Batch withDeadline(long nanoTime) {
        return new Batch(data, eventCount, nanoTime);
    }

    /** The deadline, or {@code 0} for none. */
    public long deadlineNanos() {
        return deadlineNanos;
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
