package io.ehrelay.internal.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;

/**
 * One cache's resync in progress: the keys the peer's snapshot held, and the keys live events or local writes
 * changed while it ran (those the snapshot must not undo). A live event is newer than the snapshot when it
 * comes in a batch of the snapshot's stream numbered after the snapshot's mark, or from anyone else; older ones
 * (in flight when the snapshot was taken) do not protect their key. Guarded by its own monitor: the receive path
 * holds it while it applies a live event, so an event and the snapshot's element for the same key never
 * interleave.
 */
final class ResyncTrack {

    private final Set<Object> seen = new HashSet<>();
    /** Key → {stream, seq} of the last live event that changed it; {0, 0} for a local write. */
    private final Map<Object, long[]> touched = new HashMap<>();
    /** A live or local removeAll: {stream, seq}, or null. */
    private long[] cleared;
    private long markStream;
    private long markSeq;

    /** A live event was applied (caller holds the monitor). */
    void touch(ReplicationEvent ev, long stream, long seq) {
        if (ev.op() == Op.REMOVE_ALL) {
            cleared = new long[] {stream, seq};
        } else {
            touched.put(ev.key(), new long[] {stream, seq});
        }
    }

    /** A local write ({@code key == null}: removeAll), newer than any snapshot. */
    synchronized void touchLocal(Object key) {
        if (key == null) {
            cleared = new long[] {0, 0};
        } else {
            touched.put(key, new long[] {0, 0});
        }
    }

    private boolean newer(long[] event) {
        return event != null && (event[0] == 0 || event[0] != markStream || event[1] > markSeq);
    }

    /**
     * Applies the snapshot's element unless a newer live event or a local write changed its key meanwhile.
     *
     * @param stream the snapshot's mark: the serving node's stream for this cache and its last batch number
     *               when it listed the keys
     */
    synchronized void offer(Ehcache cache, Element e, long stream, long seq) {
        markStream = stream;
        markSeq = seq;
        seen.add(e.getObjectKey());
        if (newer(cleared) || newer(touched.get(e.getObjectKey()))) {
            return;
        }
        cache.put(e, true);
    }

    /**
     * The snapshot held an element this node cannot decode: its key is removed here (unless something newer
     * wrote it), and when not even the key decoded ({@link Op#REMOVE_ALL}) nothing is marked seen, so the end of
     * the resync removes whatever the peer's snapshot did not deliver.
     */
    synchronized void invalidate(Ehcache cache, ReplicationEvent invalidation) {
        if (invalidation.op() == Op.REMOVE_ALL || newer(cleared) || newer(touched.get(invalidation.key()))) {
            return;
        }
        cache.remove(invalidation.key(), true);
    }

    /** After the whole snapshot: removes what the peer did not hold and nothing newer wrote; returns how many. */
    long removeOthers(Ehcache cache) {
        long n = 0;
        for (Object key : new ArrayList<Object>(cache.getKeys())) {
            synchronized (this) {
                if (seen.contains(key) || newer(cleared) || newer(touched.get(key))) {
                    continue;
                }
                cache.remove(key, true);
                n++;
            }
        }
        return n;
    }
}
