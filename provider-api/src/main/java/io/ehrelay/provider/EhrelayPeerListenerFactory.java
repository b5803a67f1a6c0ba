package io.ehrelay.provider;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Properties;

import io.ehrelay.internal.Dependencies;
import io.ehrelay.internal.config.MixedFactories;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.TransportSettings;
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
    protected TransportSettings readTransportProperties(PropertyReader reader) {
        return null;
    }

    @Override
    public CacheManagerPeerListener createCachePeerListener(CacheManager cacheManager, Properties properties) {
        Dependencies.check();
        MixedFactories.check(cacheManager);
        PropertyReader reader = new PropertyReader(getClass().getSimpleName(), properties);
        ListenerConfig config = readListener(reader, defaultPort())
                .withTransportSettings(readTransportProperties(reader));
        reader.rejectUnknown();
        ReplicationNode node = ReplicationNode.obtain(cacheManager, scheme, transportName,
                EhrelayReplicator.of(scheme));
        node.setListener(config);
        return new EhrelayPeerListener(node, config);
    }

    /** Reads {@code hostName} and {@code port}; the caller may read more and must call {@code rejectUnknown}. */
    private static ListenerConfig readListener(PropertyReader r, int defaultPort) {
        String host = r.string(ListenerConfig.HOST_NAME);
        if (host == null) {
            try {
                host = InetAddress.getLocalHost().getHostAddress();
            } catch (UnknownHostException e) {
                throw r.invalid(ListenerConfig.HOST_NAME, "",
                        "an explicit host name: this machine's own name does not resolve");
            }
        } else {
            try {
                InetAddress.getByName(host);
            } catch (UnknownHostException e) {
                throw r.invalid(ListenerConfig.HOST_NAME, host, "a resolvable host name or IP address");
            }
        }
        int port = r.intIn(ListenerConfig.PORT, defaultPort, 0, 65535);
        String advertisedHost = r.string(ListenerConfig.ADVERTISED_HOST_NAME);
        if (advertisedHost != null && !advertisedHost.matches("[A-Za-z0-9_.:\\-\\[\\]%]+")) {
            throw r.invalid(ListenerConfig.ADVERTISED_HOST_NAME, advertisedHost,
                    "the host name or address peers reach this node at");
        }
        int advertisedPort = r.intIn(ListenerConfig.ADVERTISED_PORT, 0, 0, 65535);
        return new ListenerConfig(host, port, null, advertisedHost, advertisedPort);
    }
}
