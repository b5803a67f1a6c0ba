package io.ehrelay.testing;

import java.rmi.RemoteException;
import java.util.ArrayList;
import java.util.List;

import net.sf.ehcache.Ehcache;
import net.sf.ehcache.distribution.CachePeer;

/** A cache's (or a cache peer's) keys, typed: Ehcache 2's {@code getKeys()} returns a raw {@code List}. */
public final class CacheKeys {

    private CacheKeys() {
    }

    public static List<Object> of(Ehcache cache) {
        List<?> keys = cache.getKeys();
        return new ArrayList<Object>(keys);
    }

    public static List<Object> of(CachePeer peer) throws RemoteException {
        List<?> keys = peer.getKeys();
        return new ArrayList<Object>(keys);
    }
}
