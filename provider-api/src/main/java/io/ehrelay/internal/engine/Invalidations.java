package io.ehrelay.internal.engine;

import java.util.Collections;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.AllowList;
import io.ehrelay.internal.codec.Rejection;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import net.sf.ehcache.Ehcache;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a node does with a received event it cannot apply, so that it never serves data another node changed: it
 * removes the key here without replicating that (keeping the write's version), counts it in {@code invalidated} and
 * says why; when not even the key was decoded, anti-entropy finds it. A refused class is logged once per class and
 * cache with the {@code allowedClasses} that admits it (at most {@value #MAX_DISTINCT} messages), other causes in
 * the rate-limited log (docs/reliability.md, "Missed events"). Thread-safe.
 */
final class Invalidations {

    private static final Logger LOG = LoggerFactory.getLogger(Invalidations.class);
    static final int MAX_DISTINCT = 4096;

    private final ReplicationMetrics metrics;
    private final AllowList allowList;
    private final RateLimitedLog warn;
    private final Set<String> told = Collections.newSetFromMap(new ConcurrentHashMap<>());

    Invalidations(ReplicationMetrics metrics, AllowList allowList, RateLimitedLog warn) {
        this.metrics = metrics;
        this.allowList = allowList;
        this.warn = warn;
    }

    /**
     * An event that could not be decoded: counts it and says why. Its invalidation (the rejection's
     * {@linkplain Rejection#invalidation() stand-in event}) is applied by the caller, in the event's
     * place, or counted in {@code unknownCache} when this node has no such cache.
     */
    void undecodable(String fromPeer, Rejection r, boolean cacheKnown) {
        String cls = r.rejectedClass();
        String event = r.op() == null ? "an event" : "a " + r.op();
        if (cacheKnown) {
            CacheMetrics m = metrics.cache(r.cacheName());
            if (r.reason() instanceof RejectedClassException) {
                m.onRejected();
            }
            if (r.invalidation().key() != null) {
                m.onInvalidated(); // without a key, each key found by its hash is counted where it is removed
            }
        } else {
            metrics.markRejected();
        }
        String what = r.invalidation().key() == null ? "the key this node wrote whose bytes match (not even the key "
                + "could be decoded; nothing else)" : "its key " + r.invalidation().key();
        if (cls != null) {
            String tellKey = r.cacheName() + '\u0000' + cls;
            if (told.size() < MAX_DISTINCT && told.add(tellKey)) {
                String addition = allowList.additionFor(cls);
                LOG.warn("ehrelay: cache '{}' received {} from {} holding class {}, which allowedClasses does not "
                        + "admit; removed {} here instead (counted in invalidated and rejected). To replicate it, "
                        + "set on every node's cacheManagerPeerProviderFactory: {}{}", r.cacheName(), event,
                        fromPeer, cls, what, allowList.settingWith(Collections.singletonList(addition)),
                        addition.startsWith("@") ? " (the preset " + addition + " admits " + cls + ")" : "");
                return;
            }
            warn.warn("rejected:" + r.cacheName(), "ehrelay: cache '{}' received {} from {} holding class {}, "
                    + "which allowedClasses does not admit; removed {} here instead (counted in invalidated)",
                    r.cacheName(), event, fromPeer, cls, what);
            return;
        }
        warn.warn("undecodable:" + r.cacheName(), "ehrelay: cache '{}' received {} from {} that cannot be "
                + "decoded; removed {} here instead (counted in invalidated): {}", r.cacheName(), event, fromPeer,
                what, r.reason().getMessage());
    }

    /**
     * The cache refused to apply a decoded event (it threw): removes the event's key here instead (every
     * element, for a removeAll or when even the removal throws), counted in {@code applyFailed} and
     * {@code invalidated}.
     */
    void applyFailed(String fromPeer, Ehcache cache, CacheMetrics m, ReplicationEvent ev, RuntimeException e) {
        m.onApplyFailed();
        String done;
        try {
            if (ev.op() != Op.REMOVE_ALL) {
                cache.remove(ev.key(), true);
                done = "removed its key here instead";
            } else {
                cache.removeAll(true);
                done = "removed every element here instead";
            }
            m.onInvalidated();
        } catch (RuntimeException again) {
            done = invalidateAll(cache, m, again);
        }
        warn.warn("apply:" + ev.cacheName(), "ehrelay: could not apply {} from {} ({}); {} (counted in applyFailed "
                + "and invalidated)", ev, fromPeer, e.toString(), done);
        LOG.debug("apply failure", e);
    }

    private static String invalidateAll(Ehcache cache, CacheMetrics m, RuntimeException why) {
        try {
            cache.removeAll(true);
            m.onInvalidated();
            return "even removing its key failed (" + why + "), so every element was removed here";
        } catch (RuntimeException e) {
            LOG.error("ehrelay: cache '{}' refuses both a replicated event and its invalidation; it may serve data "
                    + "another node changed until it is cleared", cache.getName(), e);
            return "the cache refused its invalidation too (" + e + ")";
        }
    }
}
