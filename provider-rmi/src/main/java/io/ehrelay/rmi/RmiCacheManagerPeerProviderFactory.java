package io.ehrelay.rmi;

import java.util.Properties;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerProviderFactory;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.distribution.CacheManagerPeerProvider;

/**
 * {@code cacheManagerPeerProviderFactory} of the RMI transport, with the stock properties:
 * {@code peerDiscovery=manual} with {@code rmiUrls=//host:port/cacheName|...} (each distinct {@code host:port}
 * is one peer), or {@code automatic} with the multicast properties; plus the provider-api node properties and
 * {@code tls}, {@code tlsKeyStore}, {@code tlsKeyStorePassword}, {@code tlsTrustStore},
 * {@code tlsTrustStorePassword}, {@code tlsStoreType}, {@code tlsClientAuth}, {@code peerOutboundMaxBytes},
 * {@code retryMaxMillis} (formerly {@code lookupRetryMaxMillis}), {@code callTimeoutMillis} (formerly
 * {@code clientSocketTimeoutMillis}).
 */
public class RmiCacheManagerPeerProviderFactory extends EhrelayPeerProviderFactory {

    /** Stock RMI's stale time for its heartbeats every 5 s: 2 x 5 s + 100 ms. */
    static final String STOCK_STALE_MILLIS = "10100";

    public RmiCacheManagerPeerProviderFactory() {
        super(RmiSettings.SCHEME, RmiSettings.NAME, "rmiUrls");
    }

    /**
     * With automatic discovery, peers are forgotten after stock's own stale time ({@value #STOCK_STALE_MILLIS}
     * ms) without a heartbeat unless {@code peerTimeoutMillis} says otherwise: stock nodes, which may be peers,
     * send one every 5 s; no slower than stock to forget a dead peer. Given empty ({@code peerTimeoutMillis=}),
     * it takes that default too, with the WARN every empty property gets.
     */
    @Override
    public CacheManagerPeerProvider createCachePeerProvider(
            CacheManager cacheManager, Properties properties) {
        Properties p = new Properties();
        if (properties != null) {
            p.putAll(properties);
        }
        String timeout = trimmed(p.getProperty("peerTimeoutMillis"));
        if ("automatic".equalsIgnoreCase(trimmed(p.getProperty("peerDiscovery")))
                && (timeout == null || timeout.isEmpty())) {
            if (timeout != null) {
                PropertyReader.warnEmpty(getClass().getSimpleName(), "peerTimeoutMillis", STOCK_STALE_MILLIS);
            }
            p.setProperty("peerTimeoutMillis", STOCK_STALE_MILLIS);
        }
        return super.createCachePeerProvider(cacheManager, p);
    }

    private static String trimmed(String s) {
        return s == null ? null : s.trim();
    }

    @Override
    protected Transport createTransport(PropertyReader reader, NodeConfig nodeConfig) {
        RmiSettings settings = RmiSettings.read(reader, nodeConfig);
        return new RmiTransport(settings, nodeConfig.limits());
    }

    @Override
    protected String manualPeerFormat() {
        return "entries such as //host:port/cacheName separated by |";
    }
}
