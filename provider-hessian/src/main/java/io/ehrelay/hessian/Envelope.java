package io.ehrelay.hessian;

import java.io.Serializable;
import java.nio.ByteBuffer;

import io.ehrelay.internal.InboundBudget;

/**
 * The only object a Hessian call to an ehrelay endpoint may carry: who sends, and the call's arguments
 * (a cache name, a transfer id, a chunk size, the length of the batch). Hessian maps it field by field; nothing
 * else is instantiated on the receiving side. The batch itself is not a field: it travels as the call's second
 * argument, a Hessian binary, which the endpoint reads in bulk into an array of {@code payloadLength} bytes
 * (Hessian's own {@code readBytes} goes byte by byte); a large batch into an array of the node's inbound budget
 * reused from batch to batch, which may be longer ({@link #payloadBuffer()} is the batch).
 */
public final class Envelope implements Serializable {

    private static final long serialVersionUID = 1L;

    String from;
    String cacheName;
    long transferId;
    int maxChunkBytes;
    int payloadLength = -1;
    transient byte[] payload;
    /** A received batch ({@code deliver}, {@code post}), in an array of the node's budget; {@code payload} is then null. */
    transient InboundBudget.Borrowed batch;

    public Envelope() {
    }

    /** The batch a call carries, or {@code null} when it carries none. */
    ByteBuffer payloadBuffer() {
        return batch != null ? batch.batch() : payload == null ? null : ByteBuffer.wrap(payload);
    }

    /** Gives a received batch's array back (for a later batch), once nothing reads it any more. */
    void recycle() {
        if (batch != null) {
            batch.giveBack();
        }
    }

    static Envelope of(String from, byte[] payload) {
        Envelope e = new Envelope();
        e.from = from;
        e.payload = payload;
        return e;
    }
}
