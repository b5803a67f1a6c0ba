package io.ehrelay.spi;

import net.sf.ehcache.Element;

/**
 * One decoded replication event: operation, cache name, key, and for {@link Op#PUT} the value and the
 * element's metadata. Immutable once decoded and stamped.
 */
public final class ReplicationEvent {

    private final Op op;
    private final String cacheName;
    private final Object key;
    private final Object value;
    private final long version;
    private final long creationTime;
    private final long lastAccessTime;
    private final long hitCount;
    private final long lastUpdateTime;
    private final int timeToLive;
    private final int timeToIdle;
    private final boolean cacheDefaultLifespan;
    private long stamp;
    private long origin;
    private int valueHash;
    private int keyHash;

    /** An event as decoded from the wire: an element's key, value and Ehcache metadata. */
    public ReplicationEvent(Op op, String cacheName, Object key, Object value, long version, long creationTime,
                     long lastAccessTime, long hitCount, long lastUpdateTime, int timeToLive, int timeToIdle,
                     boolean cacheDefaultLifespan) {
        this.op = op;
        this.cacheName = cacheName;
        this.key = key;
        this.value = value;
        this.version = version;
        this.creationTime = creationTime;
        this.lastAccessTime = lastAccessTime;
        this.hitCount = hitCount;
        this.lastUpdateTime = lastUpdateTime;
        this.timeToLive = timeToLive;
        this.timeToIdle = timeToIdle;
        this.cacheDefaultLifespan = cacheDefaultLifespan;
    }

    /**
     * Sets the write's order: the writer's stamp and origin id (0 and 0: an unstamped write, e.g. of a stock
     * node), the hash of the value's encoded bytes, and the hash of the key's encoded bytes. Set once, by the
     * decoder, before the event is handed on.
     */
    public ReplicationEvent stamped(long stamp, long origin, int valueHash, int keyHash) {
        this.stamp = stamp;
        this.origin = origin;
        this.valueHash = valueHash;
        this.keyHash = keyHash;
        return this;
    }

    /** The writer's stamp, 0 when the writer sent none. */
    public long stamp() { return stamp; }
    /** The writer's origin id (the tie-break between equal stamps), 0 when unstamped. */
    public long origin() { return origin; }
    /** The hash of the value's encoded bytes (0 for a key-only write that carried none). */
    public int valueHash() { return valueHash; }
    /** The hash of the key's encoded bytes (0 when unknown). */
    public int keyHash() { return keyHash; }

    /** A put (or update) of {@code element} with its metadata. */
    public static ReplicationEvent put(String cacheName, Element element) {
        return new ReplicationEvent(Op.PUT, cacheName, element.getObjectKey(), element.getObjectValue(),
                element.getVersion(), element.getCreationTime(), element.getLastAccessTime(), element.getHitCount(),
                element.getLastUpdateTime(), element.getTimeToLive(), element.getTimeToIdle(),
                element.usesCacheDefaultLifespan());
    }

    /** A {@link Op#REMOVE} or {@link Op#INVALIDATE} of one key. */
    public static ReplicationEvent ofKey(Op op, String cacheName, Object key) {
        if (op != Op.REMOVE && op != Op.INVALIDATE) {
            throw new IllegalArgumentException(op + " is not a key operation");
        }
        return new ReplicationEvent(op, cacheName, key, null, 0, 0, 0, 0, 0, 0, 0, true);
    }

    /** A remove of every element of the cache. */
    public static ReplicationEvent removeAll(String cacheName) {
        return new ReplicationEvent(Op.REMOVE_ALL, cacheName, null, null, 0, 0, 0, 0, 0, 0, 0, true);
    }

    public Op op() { return op; }
    public String cacheName() { return cacheName; }
    public Object key() { return key; }
    public Object value() { return value; }
    public long version() { return version; }
    public long creationTime() { return creationTime; }
    public long lastAccessTime() { return lastAccessTime; }
    public long hitCount() { return hitCount; }
    public long lastUpdateTime() { return lastUpdateTime; }
    public int timeToLive() { return timeToLive; }
    public int timeToIdle() { return timeToIdle; }
    public boolean cacheDefaultLifespan() { return cacheDefaultLifespan; }

    /** Rebuilds the element with its metadata (only meaningful for {@link Op#PUT}). */
    public Element toElement() {
        return new Element(key, value, version, creationTime, lastAccessTime, hitCount, cacheDefaultLifespan,
                timeToLive, timeToIdle, lastUpdateTime);
    }

    @Override
    public String toString() {
        return op + " " + cacheName + "/" + key;
    }
}
