package io.ehrelay.internal.codec;

import java.util.List;
import java.util.Set;

import io.ehrelay.spi.ReplicationEvent;

/** The result of decoding a batch: the events to apply and the events that could not be decoded. */
public final class DecodedBatch {
    private final List<ReplicationEvent> events;
    private final List<Rejection> rejections;
    private final int flags;
    private final long stream;
    private final long seq;
    private final Set<String> members;
    private final Set<String> removed;

    DecodedBatch(List<ReplicationEvent> events, List<Rejection> rejections, int flags, long stream, long seq,
                 Set<String> members, Set<String> removed) {
        this.members = members;
        this.removed = removed;
        this.events = events;
        this.rejections = rejections;
        this.flags = flags;
        this.stream = stream;
        this.seq = seq;
    }

    /** The events to apply, in order: the decoded ones, and in place of each undecodable one its invalidation. */
    public List<ReplicationEvent> events() { return events; }
    public List<Rejection> rejections() { return rejections; }

    /**
     * The rejection whose invalidation {@code ev} is, or {@code null} for a decoded event; without
     * rejections (the usual batch) it returns at once, allocating nothing.
     */
    public Rejection rejectionOf(ReplicationEvent ev) {
        for (Rejection r : rejections) {
            if (r.invalidation() == ev) {
                return r;
            }
        }
        return null;
    }
    /** Header flags, e.g. {@link EventCodec#FLAG_LOST}. */
    public int flags() { return flags; }
    /**
     * For a membership announcement ({@link #isMembership()}), the caches the sender replicates, or
     * {@code null} when it says "every cache" ({@link EventCodec#FLAG_EVERY_CACHE}); {@code null} for an
     * event batch.
     */
    public Set<String> members() { return members; }
    /** For a membership announcement, the caches the sender removed (in its run, not added again). */
    public Set<String> removed() { return removed; }
    /**
     * Whether this is a membership announcement, not events ({@link #stream()} is then the sender's run,
     * {@link #seq()} the announcement's version).
     */
    public boolean isMembership() { return (flags & EventCodec.FLAG_MEMBERSHIP) != 0; }
    /** The sender's stream, 0 for an unsequenced batch. */
    public long stream() { return stream; }
    /** The batch's number in its stream (from 1), 0 for an unsequenced batch. */
    public long seq() { return seq; }
}
