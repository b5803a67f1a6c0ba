package io.ehrelay.rmi;

import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerProviderFactory;
import io.ehrelay.spi.Transport;

/**
 * {@code cacheManagerPeerProviderFactory} of the RMI transport, with the stock properties:
 * {@code peerDiscovery=manual} with {@code rmiUrls=//host:port/cacheName|...} (each distinct {@code host:port}
 * is one peer), or {@code automatic} with the multicast properties; plus the provider-api node properties and
 * {@code tls}, {@code tlsKeyStore}, {@code tlsKeyStorePassword}, {@code tlsTrustStore},
 * {@code tlsTrustStorePassword}, {@code tlsStoreType}, {@code tlsClientAuth}, {@code peerOutboundMaxBytes},
 * {@code lookupRetryMaxMillis}, {@code clientSocketTimeoutMillis}.
 */
public class RmiCacheManagerPeerProviderFactory extends EhrelayPeerProviderFactory {

    public RmiCacheManagerPeerProviderFactory() {
        super(RmiSettings.SCHEME, RmiSettings.NAME, "rmiUrls");
    }

    @Override
    protected Transport createTransport(PropertyReader reader, NodeConfig nodeConfig) {
        RmiSettings settings = RmiSettings.read(reader);
        for (String url : nodeConfig.discovery().manualPeers()) {
            try {
                RmiUrls.endpoint(url);
            } catch (IllegalArgumentException e) {
                throw reader.invalid("rmiUrls", url, "entries such as //host:port/cacheName separated by | ("
                        + e.getMessage() + ")");
            }
        }
        return new RmiTransport(settings);
    }
}
