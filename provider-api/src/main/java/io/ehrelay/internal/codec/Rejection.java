package io.ehrelay.internal.codec;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;

/**
 * An event that could not be decoded, and the local invalidation that took its place in
 * {@link DecodedBatch#events()}: of its key ({@link Op#INVALIDATE}), with a {@code null} key when not even the
 * key decoded.
 */
public final class Rejection {
    private final String cacheName;
    private final Op op;
    private final ReplicationEvent invalidation;
    private final MalformedFrameException reason;

    /** @param op the operation of the undecodable event, or {@code null} when not even that is known */
    public Rejection(String cacheName, Op op, ReplicationEvent invalidation, MalformedFrameException reason) {
        this.cacheName = cacheName;
        this.op = op;
        this.invalidation = invalidation;
        this.reason = reason;
    }

    public String cacheName() { return cacheName; }
    /** The operation of the event that could not be decoded, or {@code null} when unknown. */
    public Op op() { return op; }
    /** The local invalidation that replaced it (never replicated further). */
    public ReplicationEvent invalidation() { return invalidation; }
    /** Why: a {@link RejectedClassException} (allow-list or a limit) or another decoding failure. */
    public MalformedFrameException reason() { return reason; }

    /** The class the allow-list refused, or {@code null} when something else was the reason. */
    public String rejectedClass() {
        return reason instanceof RejectedClassException ? ((RejectedClassException) reason).className() : null;
    }
}
