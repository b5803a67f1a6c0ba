package io.ehrelay.rmi;

import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerListenerFactory;
import io.ehrelay.spi.TransportSettings;

/**
 * {@code cacheManagerPeerListenerFactory} of the RMI transport, with the stock properties: {@code hostName},
 * {@code port} (the registry; 0 = any free port), {@code remoteObjectPort} (0 = any free port) and
 * {@code socketTimeoutMillis} (read timeout of the sockets peers open to this node; default 120000); and
 * {@code maxInboundConnections} (most connections peers may hold open to this node; default 64).
 */
public class RmiCacheManagerPeerListenerFactory extends EhrelayPeerListenerFactory {

    public RmiCacheManagerPeerListenerFactory() {
        super(RmiSettings.SCHEME, RmiSettings.NAME);
    }

    @Override
    protected TransportSettings readTransportProperties(PropertyReader reader) {
        return RmiListenerSettings.read(reader);
    }
}
