package io.ehrelay.internal.engine;

/**
 * The newest write of one key a node knows: its stamp ({@link Hlc}), the id of the node that made it (the
 * tie-break), hashes of the key's and the value's encoded bytes, and whether it removed the key (a tombstone).
 * Every node orders two writes of a key the same way, whatever order they arrive in ({@link #compareTo}): by
 * stamp, then origin, then a tombstone before a put, then value hash.
 *
 * <p>Immutable, but for one case: a put of this node's application whose value the dispatcher hashes as it
 * writes the event ({@link #pendingPut}), so that the application's thread does not read a large value twice.
 * Until then the version is {@linkplain #pending() pending}: it has no value hash (0), is never served to a peer
 * (the event itself carries the write), and has a digest of its own; {@link VersionTable#settle} gives it its
 * hash, under the key's lock. A peer can hold the write only after it was settled here.
 *
 * <p>A version is also its own entry in the {@link VersionTable} that holds it ({@link #key}, {@link #next}):
 * one object per key, not a version and a map entry.
 */
final class Version implements Comparable<Version> {

    /** Mixed into a pending version's digest: its leaf differs from a peer's until it is settled. */
    private static final long PENDING_DIGEST = 0x2545F4914F6CDD1DL;

    final long stamp;
    final long origin;
    final int keyHash;
    /** Written before {@link #pending} is cleared, read after it is: final but for {@link #settle}. */
    int valueHash;
    final boolean removed;
    private volatile boolean pending;
    /** The key, while a table holds this version (else null); written and read under the key's lock. */
    Object key;
    /** The next version of the table's bucket; written and read under the key's lock. */
    Version next;

    Version(long stamp, long origin, int keyHash, int valueHash, boolean removed) {
        this.stamp = stamp;
        this.origin = origin;
        this.keyHash = keyHash;
        this.valueHash = valueHash;
        this.removed = removed;
    }

    /** A local put whose value hash the dispatcher adds when it writes the event ({@link VersionTable#settle}). */
    static Version pendingPut(long stamp, long origin, int keyHash) {
        Version v = new Version(stamp, origin, keyHash, 0, false);
        v.pending = true;
        return v;
    }

    /** Whether this is a local put not yet given its value hash (read it before {@link #valueHash}). */
    boolean pending() {
        return pending;
    }

    /** Gives a pending version its value hash; the caller holds the key's lock and accounts the digest. */
    void settle(int hash) {
        valueHash = hash;
        pending = false;
    }

    @Override
    public int compareTo(Version o) {
        int c = Long.compare(stamp, o.stamp);
        if (c == 0) {
            c = Long.compare(origin, o.origin);
        }
        if (c == 0) {
            c = Boolean.compare(removed, o.removed);
        }
        if (c == 0) {
            c = Integer.compare(valueHash, o.valueHash);
        }
        return c;
    }

    /** Whether this write is newer than {@code o} (always, when {@code o} is null). */
    boolean newerThan(Version o) {
        return o == null || compareTo(o) > 0;
    }

    /** This version's share of its digest leaf: equal on two nodes exactly when they hold the same write. */
    long digest() {
        long h = stamp * 0x9E3779B97F4A7C15L;
        h ^= Long.rotateLeft(origin * 0xC2B2AE3D27D4EB4FL, 17);
        h ^= ((long) keyHash << 32) ^ (valueHash & 0xffffffffL);
        h ^= removed ? 0x5851F42D4C957F2DL : 0;
        h ^= pending ? PENDING_DIGEST : 0;
        h ^= h >>> 29;
        h *= 0xBF58476D1CE4E5B9L;
        return h ^ (h >>> 32);
    }

    @Override
    public String toString() {
        return (removed ? "removed@" : "put@") + Long.toHexString(stamp) + "/" + Long.toHexString(origin);
    }
}
