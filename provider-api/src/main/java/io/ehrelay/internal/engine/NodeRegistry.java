package io.ehrelay.internal.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import net.sf.ehcache.CacheManager;

/**
 * The nodes of this JVM: at most one per CacheManager and transport scheme, found by the factories and the
 * replicators of that CacheManager (Ehcache creates them separately and gives them nothing else in common).
 * A node leaves the registry when it stops. Thread-safe.
 */
final class NodeRegistry {

    private static final Map<CacheManager, Map<String, ReplicationNode>> NODES = new IdentityHashMap<>();

    private NodeRegistry() {
    }

    static ReplicationNode obtain(CacheManager cacheManager, String scheme,
                                  Function<String, ReplicationNode> create) {
        synchronized (NODES) {
            Map<String, ReplicationNode> m = NODES.get(cacheManager);
            if (m == null) {
                m = new HashMap<>();
                NODES.put(cacheManager, m);
            }
            ReplicationNode node = m.get(scheme);
            if (node == null) {
                node = create.apply(scheme);
                m.put(scheme, node);
            }
            return node;
        }
    }

    static ReplicationNode find(CacheManager cacheManager, String scheme) {
        synchronized (NODES) {
            Map<String, ReplicationNode> m = NODES.get(cacheManager);
            return m == null ? null : m.get(scheme);
        }
    }

    static List<ReplicationNode> all(CacheManager cacheManager) {
        synchronized (NODES) {
            Map<String, ReplicationNode> m = NODES.get(cacheManager);
            return m == null ? Collections.<ReplicationNode>emptyList() : new ArrayList<>(m.values());
        }
    }

    /** Every node of this JVM, of every CacheManager. */
    static List<ReplicationNode> nodes() {
        synchronized (NODES) {
            List<ReplicationNode> out = new ArrayList<>();
            for (Map<String, ReplicationNode> m : NODES.values()) {
                out.addAll(m.values());
            }
            return out;
        }
    }

    /** Removes {@code node} if it is still the registered one for its CacheManager and scheme. */
    static void forget(CacheManager cacheManager, String scheme, ReplicationNode node) {
        synchronized (NODES) {
            Map<String, ReplicationNode> m = NODES.get(cacheManager);
            if (m != null && m.get(scheme) == node) {
                m.remove(scheme);
                if (m.isEmpty()) {
                    NODES.remove(cacheManager);
                }
            }
        }
    }
}
