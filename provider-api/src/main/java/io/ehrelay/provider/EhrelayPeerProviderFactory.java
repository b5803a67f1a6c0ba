package io.ehrelay.provider;

import java.util.Properties;

import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.PropertyReader;
import io.ehrelay.engine.ReplicationNode;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.distribution.CacheManagerPeerProvider;
import net.sf.ehcache.distribution.CacheManagerPeerProviderFactory;

/**
 * Base of every transport's {@code cacheManagerPeerProviderFactory}: parses the node's properties (queue,
 * dispatcher, decoder limits, discovery) plus the transport's own, rejects unknown ones, and configures the
 * CacheManager's {@link ReplicationNode}. A transport module supplies its names and its {@link Transport}.
 */
public abstract class EhrelayPeerProviderFactory extends CacheManagerPeerProviderFactory {

    /** The Ehcache scheme (provider key) of this transport, shared by its replicator and bootstrap factories. */
    protected abstract String scheme();

    /** The transport's short name used in thread names, heartbeats and ObjectNames ({@code tcp}, {@code rmi}). */
    protected abstract String transportName();

    /** The property holding the manual peer list ({@code peers}; {@code rmiUrls} for RMI). */
    protected String manualPeersProperty() {
        return "peers";
    }

    /** Reads the transport's own properties from {@code reader} and creates the (not yet started) transport. */
    protected abstract Transport createTransport(PropertyReader reader, NodeConfig nodeConfig);

    @Override
    public CacheManagerPeerProvider createCachePeerProvider(CacheManager cacheManager, Properties properties) {
        PropertyReader reader = new PropertyReader(getClass().getSimpleName(), properties);
        NodeConfig config = NodeConfig.read(reader, manualPeersProperty());
        Transport transport = createTransport(reader, config);
        reader.rejectUnknown();
        ReplicationNode node = ReplicationNode.obtain(cacheManager, scheme(), transportName());
        node.configure(config, transport);
        return new EhrelayPeerProvider(node);
    }
}
