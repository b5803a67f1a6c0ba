package io.ehrelay.spi;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An encoded event batch ready to send ({@link io.ehrelay.internal.codec.EventCodec} format), the same bytes for every
 * peer. The bytes may live in a (direct) buffer the dispatcher reuses once every peer's send completed: a
 * transport must not keep them after completing (or failing) the send's future. Immutable view.
 */
public final class Batch {

    private final ByteBuffer data;
    private final int eventCount;
    private final long deadlineNanos;
    /** The array copy, made by the first peer's send that asks and shared by the others (and deadline views). */
    private final AtomicReference<byte[]> copy;

    /** @param data the batch from its position to its limit; not modified */
    public Batch(ByteBuffer data, int eventCount) {
        this(data.slice().asReadOnlyBuffer(), eventCount, 0L, new AtomicReference<>());
    }

    private Batch(ByteBuffer readOnly, int eventCount, long deadlineNanos, AtomicReference<byte[]> copy) {
        this.data = readOnly;
        this.eventCount = eventCount;
        this.deadlineNanos = deadlineNanos;
        this.copy = copy;
    }

    public Batch(byte[] data, int eventCount) {
        this(ByteBuffer.wrap(data), eventCount);
    }

    /**
     * The same batch with a deadline (on the scale of the node's {@link Clock#nanoTime()}): a synchronous
     * put's timeout, which transports that can bound a call use as its timeout.
     */
    public Batch withDeadline(long nanoTime) {
        return new Batch(data, eventCount, nanoTime, copy);
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
}
