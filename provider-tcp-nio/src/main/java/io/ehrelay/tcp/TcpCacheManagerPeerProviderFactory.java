package io.ehrelay.tcp;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerProviderFactory;
import io.ehrelay.spi.Transport;

/**
 * {@code cacheManagerPeerProviderFactory} of the TCP transport: {@code peerDiscovery=manual} with
 * {@code peers=host:port|host:port}, or {@code automatic} with the stock multicast properties; plus the
 * provider-api node properties and {@code connectTimeoutMillis}, {@code retryMaxMillis} (formerly
 * {@code reconnectBackoffMaxMillis}), {@code peerOutboundMaxBytes}, {@code maxInboundConnections}; TLS with
 * {@code tls}, {@code tlsKeyStore}, {@code tlsKeyStorePassword}, {@code tlsTrustStore}, {@code tlsTrustStorePassword},
 * {@code tlsStoreType}, {@code tlsClientAuth}.
 */
public class TcpCacheManagerPeerProviderFactory extends EhrelayPeerProviderFactory {

    public TcpCacheManagerPeerProviderFactory() {
        super(TcpSettings.SCHEME, TcpSettings.NAME, "peers");
    }

    @Override
    protected Transport createTransport(PropertyReader reader, NodeConfig nodeConfig) {
        TcpSettings settings = TcpSettings.read(reader, nodeConfig);
        return new TcpTransport(settings);
    }

    @Override
    protected String manualPeerFormat() {
        return "host:port entries separated by |";
    }
}
