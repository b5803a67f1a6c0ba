package io.ehrelay.hessian;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerProviderFactory;
import io.ehrelay.spi.Transport;

/**
 * {@code cacheManagerPeerProviderFactory} of the Hessian/HTTP transport: {@code peerDiscovery=manual} with
 * {@code peers=http(s)://host:port/path|...}, or {@code automatic} with the stock multicast properties; plus the
 * provider-api node properties and {@code clusterToken}, {@code tlsTrustStore}, {@code tlsTrustStorePassword},
 * {@code tlsKeyStore}, {@code tlsKeyStorePassword} (client certificate), {@code tlsStoreType},
 * {@code connectTimeoutMillis}, {@code callTimeoutMillis} (formerly {@code readTimeoutMillis}), {@code peerOutboundMaxBytes}, {@code retryMaxMillis}.
 */
public class HessianCacheManagerPeerProviderFactory extends EhrelayPeerProviderFactory {

    public HessianCacheManagerPeerProviderFactory() {
        super(HessianSettings.SCHEME, HessianSettings.NAME, "peers");
    }

    @Override
    protected Transport createTransport(PropertyReader reader, NodeConfig nodeConfig) {
        HessianSettings settings = HessianSettings.read(reader, nodeConfig);
        return new HessianTransport(settings);
    }

    @Override
    protected String manualPeerFormat() {
        return "http(s)://host:port/path entries separated by |";
    }
}
