package io.ehrelay.internal.engine;

import java.util.List;

import io.ehrelay.internal.codec.ByteSink;
import io.ehrelay.spi.Batch;

/** A batch the dispatcher handed to the transport whose outcome has not been counted yet, and its buffer. */
final class InFlight {
    final List<ReplicationQueue.Entry> events;
    final SendRound round;
    final int bytes;
    final ByteSink buffer;
    final int lane;
    /**
     * Per target, in the round's order: the events left out for it (a peer that removed their cache), or
     * null; and the batch it was sent. Both null when every target got the same bytes.
     */
    final boolean[][] leftOut;
    final List<Batch> perTarget;

    InFlight(List<ReplicationQueue.Entry> events, SendRound round, int bytes, ByteSink buffer, int lane,
             boolean[][] leftOut, List<Batch> perTarget) {
        this.lane = lane;
        this.leftOut = leftOut;
        this.perTarget = perTarget;
        this.events = events;
        this.round = round;
        this.bytes = bytes;
        this.buffer = buffer;
    }
}
