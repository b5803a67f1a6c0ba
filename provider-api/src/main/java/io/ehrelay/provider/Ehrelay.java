package io.ehrelay.provider;

import com.codahale.metrics.MetricRegistry;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;

/** Entry points for applications: the metric registry of a CacheManager's replication, for custom reporters. */
public final class Ehrelay {

    private Ehrelay() {
    }

    /**
     * The Dropwizard registry holding the replication metrics of {@code cacheManager}, whose metric names are
     * their JMX ObjectNames; {@code null} when the CacheManager uses no ehrelay transport (or is shut down).
     * With several ehrelay transports in one CacheManager, the first is returned; use {@link #metricRegistry(
     * CacheManager, String)}.
     */
    public static MetricRegistry metricRegistry(CacheManager cacheManager) {
        for (ReplicationNode node : ReplicationNode.all(cacheManager)) {
            return node.metrics().registry();
        }
        return null;
    }

    /** The registry of the transport with the given provider scheme (e.g. {@code ehrelay-tcp}), or {@code null}. */
    public static MetricRegistry metricRegistry(CacheManager cacheManager, String scheme) {
        ReplicationNode node = ReplicationNode.find(cacheManager, scheme);
        return node == null ? null : node.metrics().registry();
    }
}
