package io.ehrelay.provider;

import java.util.Properties;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.internal.Dependencies;
import io.ehrelay.internal.config.MixedFactories;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PeerListSeparator;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.config.RepeatedKeys;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.config.Configuration;
import net.sf.ehcache.config.FactoryConfiguration;
import net.sf.ehcache.distribution.CacheManagerPeerProvider;
import net.sf.ehcache.distribution.CacheManagerPeerProviderFactory;

/**
 * Base of every transport's {@code cacheManagerPeerProviderFactory}: parses the node's properties (queue,
 * dispatcher, decoder limits, discovery) plus the transport's own, rejects unknown ones, and configures the
 * CacheManager's {@link ReplicationNode}. A transport module supplies its names and its {@link Transport}.
 */
public abstract class EhrelayPeerProviderFactory extends CacheManagerPeerProviderFactory {

    private final String scheme;
    private final String transportName;
    private final String manualPeersProperty;

    /**
     * @param scheme              the Ehcache scheme (provider key) of the transport, shared by its replicator and
     *                            bootstrap factories
     * @param transportName       the short name in thread names, heartbeats and ObjectNames ({@code tcp})
     * @param manualPeersProperty the property holding the manual peer list ({@code peers}; {@code rmiUrls} for RMI)
     */
    protected EhrelayPeerProviderFactory(String scheme, String transportName, String manualPeersProperty) {
        this.scheme = scheme;
        this.transportName = transportName;
        this.manualPeersProperty = manualPeersProperty;
    }

    /** Reads the transport's own properties from {@code reader} and creates the (not yet started) transport. */
    protected abstract Transport createTransport(PropertyReader reader, NodeConfig nodeConfig);

    /**
     * How manual peer entries are written, for the error that names a malformed one (each entry is checked with
     * the transport's {@link Transport#normalizePeer}).
     */
    protected String manualPeerFormat() {
        return "peer entries separated by |";
    }

    @Override
    public CacheManagerPeerProvider createCachePeerProvider(CacheManager cacheManager, Properties properties) {
        Dependencies.check();
        // peers after commas look like a key given twice (peers=h:1, h:2, h:3 gives "h" twice): the repeated key
        // is reported once the peer list is checked, which names the separator to use instead
        InvalidConfigurationException repeated = null;
        try {
            RepeatedKeys.check(cacheManager.getConfiguration(), "io.ehrelay.");
        } catch (InvalidConfigurationException e) {
            repeated = e;
        }
        PropertyReader reader = new PropertyReader(getClass().getSimpleName(), properties);
        NodeConfig config;
        Transport transport;
        try {
            config = NodeConfig.read(reader, manualPeersProperty);
            transport = createTransport(reader, config);
        } catch (InvalidConfigurationException e) {
            throw repeated != null ? repeated : e;
        }
        if (manualPeersProperty != null) {
            FactoryConfiguration<?> own = ownConfiguration(cacheManager);
            PeerListSeparator.check(reader, manualPeersProperty, config.discovery().manualPeers(),
                    own == null ? null : own.getProperties(), own == null ? null : own.getPropertySeparator(),
                    entry -> isPeer(transport, entry));
        }
        if (repeated != null) {
            throw repeated;
        }
        for (String entry : config.discovery().manualPeers()) {
            try {
                transport.normalizePeer(entry);
            } catch (IllegalArgumentException e) {
                throw reader.invalid(manualPeersProperty, entry, manualPeerFormat() + " (" + e.getMessage() + ")");
            }
        }
        reader.rejectUnknown();
        if (config.clusterSecret() != null && !transport.provesClusterSecret()) {
            throw new InvalidConfigurationException("ehrelay " + reader.owner() + ": property '"
                    + NodeConfig.CLUSTER_SECRET + "' is not supported by the " + transportName + " transport yet "
                    + "(the TCP, RMI, Hessian and JGroups transports support it); authenticate its peers as its documentation "
                    + "says, or list their hosts in unauthenticatedPeers");
        }
        // a cache whose replicator or bootstrap loader is another family's (stock RMI's, say) would not replicate
        MixedFactories.check(cacheManager);
        ReplicationNode node = ReplicationNode.obtain(cacheManager, scheme, transportName,
                EhrelayReplicator.of(scheme));
        node.configure(config, transport);
        return new EhrelayPeerProvider(node);
    }

    /** This factory's entry in the CacheManager's configuration (its raw properties), or {@code null}. */
    private FactoryConfiguration<?> ownConfiguration(CacheManager cacheManager) {
        Configuration c = cacheManager.getConfiguration();
        if (c == null) {
            return null;
        }
        for (FactoryConfiguration<?> f : c.getCacheManagerPeerProviderFactoryConfiguration()) {
            if (getClass().getName().equals(f.getFullyQualifiedClassPath())) {
                return f;
            }
        }
        return null;
    }

    private static boolean isPeer(Transport transport, String entry) {
        try {
            transport.normalizePeer(entry);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
