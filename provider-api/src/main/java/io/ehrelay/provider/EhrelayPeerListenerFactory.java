package io.ehrelay.provider;

import java.util.Properties;

import io.ehrelay.config.ListenerConfig;
import io.ehrelay.config.PropertyReader;
import io.ehrelay.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.distribution.CacheManagerPeerListener;
import net.sf.ehcache.distribution.CacheManagerPeerListenerFactory;

/**
 * Base of every transport's {@code cacheManagerPeerListenerFactory}: parses {@code hostName} and {@code port}
 * (plus the transport's own properties) and tells the CacheManager's node where to listen. The node itself
 * starts with the peer provider.
 */
public abstract class EhrelayPeerListenerFactory extends CacheManagerPeerListenerFactory {

    private final String scheme;
    private final String transportName;

    /** @param scheme the transport's provider scheme; @param transportName its short name ({@code tcp}) */
    protected EhrelayPeerListenerFactory(String scheme, String transportName) {
        this.scheme = scheme;
        this.transportName = transportName;
    }

    /** The port used when none is given; 0 picks any free port. */
    protected int defaultPort() {
        return 0;
    }

    /**
     * Reads transport-specific listener properties; the result reaches the transport as
     * {@link ListenerConfig#transportSettings}. None by default.
     */
    protected Object readTransportProperties(PropertyReader reader) {
        return null;
    }

    @Override
    public CacheManagerPeerListener createCachePeerListener(CacheManager cacheManager, Properties properties) {
        io.ehrelay.internal.Dependencies.check();
        PropertyReader reader = new PropertyReader(getClass().getSimpleName(), properties);
        ListenerConfig config = ListenerConfig.read(reader, defaultPort())
                .withTransportSettings(readTransportProperties(reader));
        reader.rejectUnknown();
        ReplicationNode node = ReplicationNode.obtain(cacheManager, scheme, transportName,
                EhrelayReplicator.of(scheme));
        node.setListener(config);
        return new EhrelayPeerListener(node, config);
    }
}
