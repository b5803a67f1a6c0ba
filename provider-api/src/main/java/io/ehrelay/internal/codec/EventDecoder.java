package io.ehrelay.internal.codec;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;

/**
 * Decodes what {@link EventCodec} encodes: batches of events, state-transfer chunks and membership
 * announcements. Every length is checked against what is left before anything is allocated. Stateless and
 * thread-safe.
 */
public final class EventDecoder {

    private EventDecoder() {
    }

    /**
     * Decodes a whole batch before anything is applied. An event whose key or value cannot be decoded — a class
     * outside the allow-list, a limit broken, a class missing on this node, a damaged serialized stream — is
     * replaced, in place, by what keeps this node from serving the data it would have changed: a local
     * invalidation of its key (with the event's stamp), or, when not even the key decodes, an invalidation without
     * a key but with the hash of the key's bytes (the receiver invalidates the keys it knows by that hash); each
     * is reported in
     * {@link DecodedBatch#rejections()}. Damage to the batch's own structure (header, lengths, an unknown
     * operation, a cache name) rejects the whole batch.
     */
    public static DecodedBatch decodeBatch(byte[] buf, int off, int len, CodecLimits limits)
            throws MalformedFrameException {
        return decodeBatch(ByteBuffer.wrap(buf, off, len), limits);
    }

    /** Decodes the batch between {@code batch}'s position and limit (heap or direct memory). */
    public static DecodedBatch decodeBatch(ByteBuffer batch, CodecLimits limits)
            throws MalformedFrameException {
        int len = batch.remaining();
        if (len > limits.maxFrameBytes()) {
            throw new MalformedFrameException("batch of " + len + " bytes exceeds maxFrameBytes=" + limits.maxFrameBytes());
        }
        ByteSource in = new ByteSource(batch);
        int version = in.readByte("batch version");
        if (version != EventCodec.FORMAT_VERSION) {
            throw new MalformedFrameException("unsupported batch format version " + version);
        }
        int count = in.readInt("event count");
        int flags = in.readByte("flags");
        long stream = in.readLong("stream");
        long seq = in.readLong("sequence number");
        boolean membership = (flags & EventCodec.FLAG_MEMBERSHIP) != 0;
        boolean every = flags == (EventCodec.FLAG_MEMBERSHIP | EventCodec.FLAG_EVERY_CACHE);
        if (membership ? flags != EventCodec.FLAG_MEMBERSHIP && !every || every && count != 0 || stream == 0 || seq < 1
                : stream == 0 ? seq != 0 || flags != 0 : seq < 0 || seq == 0 && (flags & EventCodec.FLAG_SNAPSHOT) == 0) {
            throw new MalformedFrameException("impossible stream " + stream + " / sequence number " + seq + " / flags "
                    + flags);
        }
        // every event takes at least 8 bytes: a bound on the list before allocating it
        if (count < 0 || count > in.remaining() / 8) {
            throw new MalformedFrameException("event count " + count + " impossible in " + in.remaining() + " bytes");
        }
        if (membership) {
            Set<String> removed = new LinkedHashSet<>();
            Set<String> members = every ? null : decodeMembers(in, count, removed);
            return new DecodedBatch(Collections.emptyList(), Collections.emptyList(), flags, stream, seq, members,
                    Collections.unmodifiableSet(removed));
        }
        List<ReplicationEvent> events = new ArrayList<>(count);
        List<Rejection> rejections = Collections.emptyList();
        String lastName = null;
        byte[] lastNameUtf8 = null;
        Object[] key = new Object[1];
        int[] hashes = new int[2];
        for (int i = 0; i < count; i++) {
            int outer = in.window(in.readLength("event"), "event");
            try {
                int rawOp = in.readByte("operation");
                Op op = Op.of(rawOp & ~EventCodec.STAMPED);
                String cache = in.readUtf8(in.readShort("cache name length"), "cache name", lastNameUtf8, lastName);
                if (cache != lastName) {
                    lastName = cache;
                    lastNameUtf8 = cache.getBytes(StandardCharsets.UTF_8);
                }
                long stamp = 0;
                long origin = 0;
                int valueHash = 0;
                if ((rawOp & EventCodec.STAMPED) != 0) {
                    stamp = in.readLong("stamp");
                    origin = in.readLong("origin");
                    valueHash = in.readInt("value hash");
                    if (stamp <= 0) {
                        throw new MalformedFrameException("impossible stamp " + stamp + " in " + op + " event for cache "
                                + cache);
                    }
                }
                key[0] = null;
                hashes[0] = 0;
                hashes[1] = 0;
                try {
                    ReplicationEvent decodedEvent = decodeEvent(op, cache, in, limits, key, hashes, stamp == 0);
                    events.add(decodedEvent.stamped(stamp, origin, stamp != 0 ? valueHash : hashes[1], hashes[0]));
                } catch (MalformedFrameException e) {
                    // the event's own bytes are delimited: the rest of the batch is still in step. The key's write is
                    // recorded without its value (a ghost, when stamped); when not even the key decoded, nothing is
                    // changed here: anti-entropy finds the key that differs
                    ReplicationEvent instead = ReplicationEvent.ofKey(Op.INVALIDATE, cache, key[0])
                            .stamped(stamp, origin, valueHash, hashes[0]);
                    if (rejections.isEmpty()) {
                        rejections = new ArrayList<>(2);
                    }
                    rejections.add(new Rejection(cache, op, instead, e));
                    events.add(instead);
                }
            } finally {
                in.endWindow(outer);
            }
        }
        if (in.remaining() != 0) {
            throw new MalformedFrameException(in.remaining() + " trailing bytes after " + count + " events");
        }
        return new DecodedBatch(events, rejections, flags, stream, seq, null, Collections.<String>emptySet());
    }

    private static Set<String> decodeMembers(ByteSource in, int count, Set<String> removed)
            throws MalformedFrameException {
        Set<String> names = new LinkedHashSet<>();
        for (int i = 0; i < count; i++) {
            int outer = in.window(in.readLength("membership entry"), "membership entry");
            try {
                int op = in.readByte("operation");
                if (op != EventCodec.MEMBER_OP && op != EventCodec.REMOVED_OP) {
                    throw new MalformedFrameException("operation code " + op + " in a membership announcement");
                }
                String name = in.readUtf8(in.readShort("cache name length"), "cache name");
                (op == EventCodec.MEMBER_OP ? names : removed).add(name);
                end(in);
            } finally {
                in.endWindow(outer);
            }
        }
        if (in.remaining() != 0) {
            throw new MalformedFrameException(in.remaining() + " trailing bytes after " + count + " cache names");
        }
        return Collections.unmodifiableSet(names);
    }

    /**
     * @param decodedKey receives the key as soon as it is decoded, for the invalidation of a failed event
     * @param hashes receives the CRC-32 of the key's encoded bytes, and of the value's when {@code hashValue}
     */
    private static ReplicationEvent decodeEvent(Op op, String cache, ByteSource in, CodecLimits limits,
            Object[] decodedKey, int[] hashes, boolean hashValue) throws MalformedFrameException {
        if (op == Op.REMOVE_ALL) {
            end(in);
            return new ReplicationEvent(op, cache, null, null, 0, 0, 0, 0, 0, 0, 0, true);
        }
        int keyAt = in.position();
        Object key;
        try {
            key = ValueCodec.read(in, limits, "key");
        } catch (MalformedFrameException e) {
            // the key's bytes were read (its class refused or missing here): their hash still names the key
            hashes[0] = in.crc(keyAt, in.position());
            throw e;
        }
        if (key == null) {
            throw new MalformedFrameException("null key in " + op + " event for cache " + cache);
        }
        hashes[0] = in.crc(keyAt, in.position());
        decodedKey[0] = key;
        if (op != Op.PUT) {
            end(in);
            return new ReplicationEvent(op, cache, key, null, 0, 0, 0, 0, 0, 0, 0, true);
        }
        int valueAt = in.position();
        Object value = ValueCodec.read(in, limits, "value");
        if (hashValue) {
            hashes[1] = in.crc(valueAt, in.position());
        }
        long version = in.readLong("version");
        long creation = in.readLong("creation time");
        long access = in.readLong("last access time");
        long hits = in.readLong("hit count");
        long update = in.readLong("last update time");
        int ttl = in.readInt("time to live");
        int tti = in.readInt("time to idle");
        int flags = in.readByte("flags");
        end(in);
        return new ReplicationEvent(op, cache, key, value, version, creation, access, hits, update, ttl, tti,
                (flags & 1) != 0);
    }

    private static void end(ByteSource in) throws MalformedFrameException {
        if (in.remaining() != 0) {
            throw new MalformedFrameException(in.remaining() + " trailing bytes in event");
        }
    }
}
