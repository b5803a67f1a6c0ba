package io.ehrelay.provider;

import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;

/** Finds the node a cache's replicator or bootstrap loader works through, with a clear error when missing. */
final class NodeLookup {

    private NodeLookup() {
    }

    static ReplicationNode nodeOf(Ehcache cache, String scheme, String providerFactoryClassName, String role) {
        CacheManager cm = cache.getCacheManager();
        ReplicationNode node = cm == null ? null : ReplicationNode.find(cm, scheme);
        if (node == null) {
            throw new CacheException("ehrelay: cache '" + cache.getName() + "' uses " + role + " but its CacheManager "
                    + (cm == null ? "" : "'" + cm.getName() + "' ") + "has no cacheManagerPeerProviderFactory of class "
                    + providerFactoryClassName);
        }
        return node;
    }
}
