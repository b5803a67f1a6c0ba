
package io.ehrelay.internal.codec;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.zip.CRC32;

import io.ehrelay.spi.Op;
import net.sf.ehcache.Element;

/**
 * Encodes replication events and batches of them: the one wire format every transport carries, described in
 * docs/wire-format.md ({@link EventDecoder} reads it back). Each event is encoded once — into a self-contained
 * byte array on the writing thread, or, for an asynchronous put whose key and value need no Java serialization,
 * by the dispatcher straight into the batch ({@link #writePut}) — and a batch's bytes go to every peer. Stateless
 * and thread-safe.
 */
public final class EventCodec {

    /** 2: the batch header carries the sender's stream, sequence number and flags (1 had only the count). */
    public static final int FORMAT_VERSION = 2;
    /** Bytes of the batch header: version, event count, flags, stream, sequence number. */
    public static final int BATCH_HEADER_BYTES = 1 + 4 + 1 + 8 + 8;
    /**
     * Header flag: the sender lost events of this stream since its previous batch (its queue was full, an event
     * could not be encoded, or it resolved a partition in its favour); receivers resynchronise from it.
     */
    public static final int FLAG_LOST = 1;
    /**
     * Header flag of a state-transfer chunk: {@code stream} and {@code seq} name the sending node's stream of the
     * cache and its last batch number when the transfer opened (live events in later batches are newer).
     */
    public static final int FLAG_SNAPSHOT = 2;
    /**
     * Header flag of a membership announcement: the entries name every cache the sender replicates now,
     * replacing what it announced before; {@code stream} identifies the sender's run and {@code seq} numbers its
     * announcements, so one that arrives after a newer one is ignored. Not an event batch (receivers older than
     * this flag refuse it as malformed, which changes nothing for them).
     */
    public static final int FLAG_MEMBERSHIP = 4;
    /**
     * With {@link #FLAG_MEMBERSHIP}: the sender has not said which caches it holds (it started a new run): treat
     * it as holding every cache. Carries no entries.
     */
    public static final int FLAG_EVERY_CACHE = 8;
    /**
     * Bit of an event's operation byte: a stamp block follows the cache name (every event ehrelay writes has one;
     * an event without one is unordered, as from a stock node).
     */
    public static final int STAMPED = 0x40;
    /** Bytes of an event's stamp block. */
    public static final int STAMP_BYTES = 8 + 8 + 4;
    /** The operation codes of membership entries, valid only in a membership announcement. */
    static final int MEMBER_OP = 5;
    static final int REMOVED_OP = 6;

    /** Bytes of an event besides its cache name, key and value: length, op, name length, metadata. */
    private static final int PUT_OVERHEAD = 4 + 1 + 2 + STAMP_BYTES + 5 * 8 + 2 * 4 + 1;

    /** Per thread, where {@link #hashOf} encodes what it hashes (keys and small values: no allocation). */
    private static final ThreadLocal<ByteSink> HASH_SINK = ThreadLocal.withInitial(() -> new ByteSink(64));

    private EventCodec() {
    }

    /**
     * The exact encoded size of a put of {@code e}, or -1 when its key or value needs Java serialization (then
     * the size is only known by encoding).
     */
    public static int putSize(byte[] cacheNameUtf8, Element e) {
        int keySize = ValueCodec.sizeOf(e.getObjectKey());
        int valueSize = ValueCodec.sizeOf(e.getObjectValue());
        return keySize < 0 || valueSize < 0 ? -1 : PUT_OVERHEAD + cacheNameUtf8.length + keySize + valueSize;
    }

    /**
     * Appends a put event for {@code e} (length prefix included) to {@code out}, e.g. a batch being built.
     *
     * @return where in {@code out} the value's own bytes begin when the value is a {@code byte[]} (written as it
     *         is), else -1
     */
    public static int writePut(ByteSink out, byte[] cacheNameUtf8, Element e, long stamp, long origin,
                               int valueHash) throws IOException {
        int start = out.position();
        out.writeInt(0);
        out.write(Op.PUT.code() | STAMPED);
        out.writeShort(cacheNameUtf8.length);
        out.write(cacheNameUtf8, 0, cacheNameUtf8.length);
        out.writeLong(stamp);
        out.writeLong(origin);
        out.writeInt(valueHash);
        ValueCodec.write(out, e.getObjectKey());
        int valueAt = out.position() + ValueCodec.BYTES_PREFIX;
        writeValueAndMetadata(out, e, null);
        out.putInt(start, out.position() - start - 4);
        return e.getObjectValue() instanceof byte[] ? valueAt : -1;
    }

    /** Encodes a put or update carrying the element. */
    public static byte[] encodePut(String cacheName, Element e) throws IOException {
        return encodePut(cacheName, e, null);
    }

    /** Encodes a put or update carrying the element; {@code watch} (may be null) is told the classes serialized. */
    public static byte[] encodePut(String cacheName, Element e, ClassWatch watch) throws IOException {
        return encodePut(cacheName, e, watch, null);
    }

    /**
     * Encodes a put or update carrying the element. With {@code hashes} (two ints) the event is stamped: its stamp
     * block is left zero for {@link #stamp} to fill, and {@code hashes} receives the CRC-32 of the key's and of
     * the value's encoded bytes; without, the event is unstamped.
     */
    public static byte[] encodePut(String cacheName, Element e, ClassWatch watch, int[] hashes) throws IOException {
        int keySize = ValueCodec.sizeOf(e.getObjectKey());
        int valueSize = ValueCodec.sizeOf(e.getObjectValue());
        // exact when key and value are fast-path types of known size: the array is then used without a copy
        int hint = (keySize < 0 ? 64 : keySize) + (valueSize < 0 ? estimate(e.getObjectValue()) : valueSize)
                + PUT_OVERHEAD - 7 - (hashes == null ? STAMP_BYTES : 0);
        ByteSink out = start(Op.PUT, cacheName, e.getObjectKey(), hint, watch, hashes);
        int valueAt = out.position();
        ValueCodec.write(out, e.getObjectValue(), watch);
        if (hashes != null) {
            hashes[1] = out.crc(valueAt, out.position());
        }
        writeMetadata(out, e);
        return finish(out);
    }

    /**
     * Fills a stamped event's stamp block (see {@link #encodePut(String, Element, ClassWatch, int[])}).
     *
     * @throws IllegalArgumentException when {@code event} is not stamped
     */
    public static void stamp(byte[] event, long stamp, long origin, int valueHash) {
        if ((event[4] & STAMPED) == 0) {
            throw new IllegalArgumentException("event without a stamp block");
        }
        int at = 7 + (((event[5] & 0xff) << 8) | (event[6] & 0xff));
        ByteBuffer.wrap(event, at, STAMP_BYTES).putLong(stamp).putLong(origin).putInt(valueHash);
    }

    /** The CRC-32 of a key's or value's encoded bytes, as the decoder computes it. */
    public static int hashOf(Object v) throws IOException {
        if (v instanceof byte[]) {
            byte[] b = (byte[]) v;
            CRC32 crc = ByteSource.threadCrc();
            crc.update(ValueCodec.BYTES);
            crc.update(b.length >>> 24);
            crc.update(b.length >>> 16);
            crc.update(b.length >>> 8);
            crc.update(b.length);
            crc.update(b, 0, b.length);
            return (int) crc.getValue();
        }
        ByteSink out = HASH_SINK.get();
        out.reset();
        ValueCodec.write(out, v);
        int crc = out.crc(0, out.position());
        if (out.position() > 4096) {
            HASH_SINK.remove(); // a large serialized value: not kept for the next one
        }
        return crc;
    }

    private static void writeValueAndMetadata(ByteSink out, Element e, ClassWatch watch) throws IOException {
        ValueCodec.write(out, e.getObjectValue(), watch);
        writeMetadata(out, e);
    }

    private static void writeMetadata(ByteSink out, Element e) {
        out.writeLong(e.getVersion());
        out.writeLong(e.getCreationTime());
        out.writeLong(e.getLastAccessTime());
        out.writeLong(e.getHitCount());
        out.writeLong(e.getLastUpdateTime());
        out.writeInt(e.getTimeToLive());
        out.writeInt(e.getTimeToIdle());
        out.write(e.usesCacheDefaultLifespan() ? 1 : 0);
    }

    /** Encodes an event that carries only a key: {@link Op#INVALIDATE} or {@link Op#REMOVE}. */
    public static byte[] encodeKey(Op op, String cacheName, Object key) throws IOException {
        return encodeKey(op, cacheName, key, null);
    }

    /** Encodes a key-only event; {@code watch} (may be null) is told the classes serialized. */
    public static byte[] encodeKey(Op op, String cacheName, Object key, ClassWatch watch) throws IOException {
        return encodeKey(op, cacheName, key, watch, null);
    }

    /**
     * Encodes a key-only event: {@link Op#INVALIDATE} or {@link Op#REMOVE}; stamped when {@code hashes} is given
     * (then {@code hashes[0]} receives the key's hash; see {@link #stamp}).
     */
    public static byte[] encodeKey(Op op, String cacheName, Object key, ClassWatch watch, int[] hashes)
            throws IOException {
        if (op != Op.INVALIDATE && op != Op.REMOVE) {
            throw new IllegalArgumentException("not a key operation: " + op);
        }
        int keySize = ValueCodec.sizeOf(key);
        return finish(start(op, cacheName, key, keySize < 0 ? 32 : keySize, watch, hashes));
    }

    /** An unstamped removeAll. */
    public static byte[] encodeRemoveAll(String cacheName) throws IOException {
        return finish(header(Op.REMOVE_ALL, cacheName, 0, false));
    }

    /** A stamped removeAll (see {@link #stamp}). */
    public static byte[] encodeStampedRemoveAll(String cacheName) {
        return finish(header(Op.REMOVE_ALL, cacheName, STAMP_BYTES, true));
    }

    private static ByteSink start(Op op, String cacheName, Object key, int sizeHint, ClassWatch watch,
                                  int[] hashes) throws IOException {
        boolean stamped = hashes != null;
        ByteSink out = header(op, cacheName, sizeHint + (stamped ? STAMP_BYTES : 0), stamped);
        int keyAt = out.position();
        ValueCodec.write(out, key, watch);
        if (stamped) {
            hashes[0] = out.crc(keyAt, out.position());
        }
        return out;
    }

    /**
     * Starts an event; {@code sizeHint} is the expected size of what follows the cache name; a stamped event gets
     * a zero stamp block.
     */
    private static ByteSink header(Op op, String cacheName, int sizeHint, boolean stamped) {
        byte[] name = cacheName.getBytes(StandardCharsets.UTF_8);
        if (name.length > 0xffff) {
            throw new IllegalArgumentException("cache name longer than 65535 bytes");
        }
        ByteSink out = new ByteSink(7 + name.length + sizeHint);
        out.writeInt(0);
        out.write(op.code() | (stamped ? STAMPED : 0));
        out.writeShort(name.length);
        out.write(name, 0, name.length);
        if (stamped) {
            out.writeLong(0);
            out.writeLong(0);
            out.writeInt(0);
        }
        return out;
    }

    private static byte[] finish(ByteSink out) {
        out.putInt(0, out.position() - 4);
        return out.toByteArray();
    }

    private static int estimate(Object value) {
        if (value instanceof byte[]) {
            return ((byte[]) value).length;
        }
        if (value instanceof String) {
            return ((String) value).length() * 3;
        }
        return 64;
    }

    /** The header of an unsequenced batch (stream 0: synchronous sends, state chunks) of {@code eventCount} events. */
    public static byte[] batchHeader(int eventCount) {
        byte[] h = new byte[BATCH_HEADER_BYTES];
        h[0] = (byte) FORMAT_VERSION;
        h[1] = (byte) (eventCount >>> 24);
        h[2] = (byte) (eventCount >>> 16);
        h[3] = (byte) (eventCount >>> 8);
        h[4] = (byte) eventCount;
        return h;
    }

    /**
     * Writes a batch header at {@code at} (over a placeholder): {@code stream} identifies one ordered sequence of
     * batches of one sender (a queue lane of one node's run), {@code seq} numbers them from 1, so a receiver
     * sees every batch it missed as a gap.
     */
    public static void putBatchHeader(ByteSink out, int at, int eventCount, int flags, long stream, long seq) {
        out.putByte(at, FORMAT_VERSION);
        out.putInt(at + 1, eventCount);
        out.putByte(at + 5, flags);
        out.putLong(at + 6, stream);
        out.putLong(at + 14, seq);
    }

    /** A batch of already encoded events ({@code size} is the sum of their lengths). */
    public static byte[] batch(List<byte[]> events, int size) {
        byte[] out = new byte[BATCH_HEADER_BYTES + size];
        System.arraycopy(batchHeader(events.size()), 0, out, 0, BATCH_HEADER_BYTES);
        int at = BATCH_HEADER_BYTES;
        for (byte[] e : events) {
            System.arraycopy(e, 0, out, at, e.length);
            at += e.length;
        }
        return out;
    }

    /** A state-transfer chunk: a batch of puts whose header carries the snapshot's mark (see FLAG_SNAPSHOT). */
    public static byte[] snapshotBatch(List<byte[]> events, int size, long stream, long seq) {
        byte[] out = batch(events, size);
        if (stream != 0) {
            out[5] = (byte) FLAG_SNAPSHOT;
            ByteBuffer.wrap(out, 6, 16).putLong(stream).putLong(seq);
        }
        return out;
    }

    /**
     * A membership announcement: this node replicates exactly {@code cacheNames} and removed {@code removed} (in
     * this run, not added again); or, when {@code cacheNames} is {@code null}, it holds every cache as far as
     * peers need to know (see the format above).
     *
     * @param run non-zero, the same for every announcement of one run of the node
     * @param version from 1, higher for each later announcement of the run
     */
    public static byte[] membershipBatch(Collection<String> cacheNames, Collection<String> removed,
                                         long run, long version) {
        if (run == 0 || version < 1) {
            throw new IllegalArgumentException("run " + run + " / version " + version);
        }
        if (cacheNames == null) {
            if (!removed.isEmpty()) {
                throw new IllegalArgumentException("'every cache' with removed caches");
            }
            ByteSink out = new ByteSink(BATCH_HEADER_BYTES);
            out.write(batchHeader(0), 0, BATCH_HEADER_BYTES);
            putBatchHeader(out, 0, 0, FLAG_MEMBERSHIP | FLAG_EVERY_CACHE, run, version);
            return out.toByteArray();
        }
        int count = cacheNames.size() + removed.size();
        ByteSink out = new ByteSink(BATCH_HEADER_BYTES + 32 * count);
        out.write(batchHeader(count), 0, BATCH_HEADER_BYTES);
        putBatchHeader(out, 0, count, FLAG_MEMBERSHIP, run, version);
        for (String cacheName : cacheNames) {
            writeEntry(out, MEMBER_OP, cacheName);
        }
        for (String cacheName : removed) {
            writeEntry(out, REMOVED_OP, cacheName);
        }
        return out.toByteArray();
    }

    private static void writeEntry(ByteSink out, int op, String cacheName) {
        byte[] name = cacheName.getBytes(StandardCharsets.UTF_8);
        if (name.length > 0xffff) {
            throw new IllegalArgumentException("cache name longer than 65535 bytes");
        }
        out.writeInt(1 + 2 + name.length);
        out.write(op);
        out.writeShort(name.length);
        out.write(name, 0, name.length);
    }

    /** A batch of one event, for synchronous sends and tests. */
    public static byte[] singletonBatch(byte[] event) {
        byte[] out = new byte[BATCH_HEADER_BYTES + event.length];
        System.arraycopy(batchHeader(1), 0, out, 0, BATCH_HEADER_BYTES);
        System.arraycopy(event, 0, out, BATCH_HEADER_BYTES, event.length);
        return out;
    }
}
