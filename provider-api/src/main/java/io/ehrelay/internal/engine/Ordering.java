package io.ehrelay.internal.engine;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Collections;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import org.slf4j.LoggerFactory;

/**
 * The order of every replicated write, on one node: stamps the application's writes ({@link Hlc} and this
 * node's origin id) and applies remote ones by compare-and-write against each cache's {@link VersionTable}, so
 * that every node keeps, for each key, the same newest write whatever order the writes arrive in. Counts what
 * it decides in the cache's metrics: {@code conflictsLocalWon}, {@code localWritesSuperseded},
 * {@code staleDiscarded}. Thread-safe.
 */
final class Ordering {

    private final Hlc hlc;
    private final long self;
    private final Clock clock;
    private final long retentionMillis;
    private final RateLimitedLog warn;
    /**
     * {@code -Dehrelay.ordering=arrival}: remote writes are applied in the order they arrive, as stock Ehcache
     * does, never compared. Only for the convergence suite's negative control, which shows what ordering prevents.
     */
    static final String ARRIVAL_PROPERTY = "ehrelay.ordering";
    /**
     * What the cache holds of a put when it is stamped (see {@link VersionTable#local}); one instance, so that a
     * put allocates no check.
     */
    private static final VersionTable.StoreCheck<Ehcache, Element> PUT_HELD = (cache, key, element) -> {
        Element now = cache == null || element == null ? null : cache.getQuiet(key);
        if (now == null) {
            return cache == null || element == null ? VersionTable.CURRENT : VersionTable.ABSENT;
        }
        return now == element || sameValue(now.getObjectValue(), element.getObjectValue())
                ? VersionTable.CURRENT : VersionTable.SUPERSEDED;
    };

    /** Whether the cache still lacks a removed key when the remove is stamped (a remote put may be back). */
    private static final VersionTable.StoreCheck<Ehcache, Void> REMOVE_HELD = (cache, key, nothing) ->
            cache == null || cache.getQuiet(key) == null ? VersionTable.CURRENT : VersionTable.SUPERSEDED;

    /** A remote put, written (one instance for every event: applying one allocates nothing). */
    private static final VersionTable.StoreWrite<Ehcache, ReplicationEvent> PUT_WRITE = (cache, key, ev) ->
            cache.put(ev.toElement(), true);
    /**
     * A remote put of the write the key's version already records, whose value this node lacks (it was told of
     * the write by an invalidation, or lost the element): the value is stored.
     */
    private static final VersionTable.StoreFill<Ehcache, ReplicationEvent> PUT_FILL = (cache, key, ev) ->
            !cache.isKeyInCache(key) && cache.putIfAbsent(ev.toElement(), true) == null;
    /** A remote remove or invalidation, written. */
    private static final VersionTable.StoreWrite<Ehcache, ReplicationEvent> REMOVE_WRITE = (cache, key, ev) ->
            cache.remove(key, true);

    private final boolean arrivalOrder = "arrival".equals(System.getProperty(ARRIVAL_PROPERTY));

    Ordering(Clock clock, long retentionMillis, RateLimitedLog warn) {
        this.clock = clock;
        this.hlc = new Hlc(clock);
        this.retentionMillis = retentionMillis;
        this.warn = warn;
        long id = 0;
        SecureRandom random = new SecureRandom();
        while (id == 0) {
            id = random.nextLong();
        }
        this.self = id;
        if (arrivalOrder) {
            LoggerFactory.getLogger(Ordering.class).warn("ehrelay: -D{}=arrival: remote writes are applied "
                    + "in arrival order, NOT ordered; nodes can end with different data (for tests only)",
                    ARRIVAL_PROPERTY);
        }
    }

    /** This node's origin id: the tie-break of its writes, new on every start. */
    long self() {
        return self;
    }

    long retentionMillis() {
        return retentionMillis;
    }

    /** Stamps below it are older than the tombstone retention. */
    long horizon() {
        return Hlc.stampAt(clock.currentTimeMillis() - retentionMillis);
    }

    // ---- the application's writes, told after the cache holds them -------------------------------------------

    /**
     * A put or update: stamped and recorded unless the cache already holds another element for the key (a remote
     * write replaced it before this node was told; counted in {@code localWritesSuperseded}). When the cache no
     * longer holds the key at all (a concurrent remove or removeAll, an eviction), the version has no value
     * ({@code valueHash} 0) and the caller replicates an invalidation instead of the put.
     *
     * @param valueHash the hash of the value's encoded bytes, or 0 when it is replicated as an invalidation
     * @return the version, or {@code null} when superseded (nothing is to be replicated)
     */
    Version localPut(CacheBinding b, Ehcache cache, Object key, Element element, int keyHash, int valueHash) {
        return put(b, cache, key, element, keyHash, valueHash, false);
    }

    /**
     * As {@link #localPut}, for a put whose value the dispatcher hashes as it writes the event: the version is
     * {@linkplain Version#pending() pending} until {@link VersionTable#settle}, or, when the cache no longer holds
     * the key, a settled version without value (the caller replicates an invalidation).
     */
    Version localPendingPut(CacheBinding b, Ehcache cache, Object key, Element element, int keyHash) {
        return put(b, cache, key, element, keyHash, 0, true);
    }

    private Version put(CacheBinding b, Ehcache cache, Object key, Element element, int keyHash, int valueHash,
                        boolean pendingHash) {
        // when the cache took it, as Ehcache stamps elements (never later than now, whatever the application set)
        long writtenAt = element == null ? 0 : Math.min(element.getLastUpdateTime(),
                VersionTable.EHCACHE_TIME.currentTimeMillis());
        Version v = b.versions.local(key, keyHash, valueHash, false, pendingHash, hlc, self, writtenAt, PUT_HELD,
                cache, element);
        if (v == null) {
            b.metrics.onLocalWriteSuperseded();
        }
        return v;
    }

    /** A remove: a tombstone, unless a remote write put the key back before this node was told. */
    Version localRemove(CacheBinding b, Ehcache cache, Object key, int keyHash) {
        Version v = b.versions.local(key, keyHash, 0, true, false, hlc, self, 0, REMOVE_HELD, cache, null);
        if (v == null) {
            b.metrics.onLocalWriteSuperseded();
        }
        return v;
    }

    /**
     * A removeAll: every key whose version is older goes, and older writes are refused from now on. Elements a
     * remote write put back meanwhile are removed again (their writes are older than this one).
     */
    Version localClear(CacheBinding b, Ehcache cache) {
        Version v = new Version(hlc.next(), self, 0, 0, true);
        b.versions.clear(v, cache == null ? Collections.emptyList() : cache.getKeys(),
                key -> cache.remove(key, true));
        return v;
    }

    private static boolean sameValue(Object a, Object b) {
        if (a == b) {
            return true;
        }
        if (a instanceof byte[] && b instanceof byte[]) {
            return Arrays.equals((byte[]) a, (byte[]) b);
        }
        return a != null && a.equals(b);
    }

    // ---- writes of other nodes ---------------------------------------------------------------------------------

    /**
     * Applies a remote write (live, bootstrap, resync or repair) if it is newer than what its key holds: a put
     * writes the element, a remove leaves a tombstone, an invalidation leaves a ghost (the version without the
     * value), a removeAll clears every older key. An unstamped write (a stock node's) is stamped on arrival: the
     * last to arrive wins, as with stock Ehcache. The caller counts {@code applied}; store failures propagate
     * (the version is recorded; the caller removes the key instead).
     *
     * @return what became of it
     */
    VersionTable.Outcome apply(CacheBinding b, Ehcache cache, ReplicationEvent ev) {
        long stamp = ev.stamp();
        long origin = ev.origin();
        if (stamp == 0 && ev.op() == Op.REMOVE_ALL) {
            // unordered (a stock node's, or a peer clearing this node's copy of a cache it was not sent): every
            // element and version goes; what the writers hold newer comes back with their events or
            // anti-entropy, and no epoch refuses it
            b.versions.forget(() -> cache.removeAll(true));
            return VersionTable.Outcome.APPLIED;
        }
        if (stamp == 0) {
            stamp = hlc.next();
            origin = 0;
            if (ev.op() != Op.REMOVE_ALL && ev.keyHash() == 0) {
                // handed over decoded (a stock node's call): the hashes every node computes from the bytes
                ev.stamped(0, 0, ev.op() == Op.PUT ? hashOrZero(ev.value()) : 0, hashOrZero(ev.key()));
            }
        } else {
            // the clock is read when the stamp is of a later millisecond than any seen: a stamp no newer
            // cannot be further ahead
            long ahead = hlc.observe(stamp) ? hlc.aheadMillis(stamp) : 0;
            if (ahead > 60_000) {
                warn.warn("clockskew", "ehrelay: a write of cache {} carries a stamp {} s ahead of this node's clock "
                        + "(origin {}): check the clocks of the nodes; writes here are now ordered after it",
                        ev.cacheName(), ahead / 1000, Long.toHexString(origin));
            }
        }
        VersionTable t = b.versions;
        VersionTable.Outcome outcome;
        if (ev.op() == Op.REMOVE_ALL) {
            Version v = new Version(stamp, origin, 0, 0, true);
            outcome = t.clear(v, cache.getKeys(), key -> cache.remove(key, true)) ? VersionTable.Outcome.APPLIED
                    : VersionTable.Outcome.STALE;
        } else {
            boolean removed = ev.op() == Op.REMOVE;
            if (arrivalOrder) {
                stamp = hlc.next(); // the last to arrive wins
            }
            Version v = new Version(stamp, origin, ev.keyHash(), removed ? 0 : ev.valueHash(), removed);
            Object key = ev.key();
            // a put of the write this node already records, whose value it lacks (it was told of the write by an
            // invalidation, or lost the element), stores the value
            outcome = ev.op() == Op.PUT
                    ? t.offer(key, v, self, Long.MIN_VALUE, PUT_WRITE, PUT_FILL, cache, ev)
                    : t.offer(key, v, self, removed ? horizon() : Long.MIN_VALUE, REMOVE_WRITE, null, cache, ev);
        }
        count(b.metrics, outcome);
        return outcome;
    }

    private static int hashOrZero(Object v) {
        try {
            return EventCodec.hashOf(v);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    static void count(CacheMetrics m, VersionTable.Outcome outcome) {
        switch (outcome) {
            case LOCAL_WON:
                m.onConflictLocalWon();
                break;
            case STALE:
            case SAME:
                m.onStaleDiscarded();
                break;
            default:
                break;
        }
    }
}
