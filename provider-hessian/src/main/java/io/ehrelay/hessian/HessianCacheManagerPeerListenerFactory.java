package io.ehrelay.hessian;

import io.ehrelay.spi.TransportSettings;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerListenerFactory;

/**
 * {@code cacheManagerPeerListenerFactory} of the Hessian/HTTP transport: {@code hostName}, {@code port} (0 = any
 * free port), {@code path} (default {@code /ehrelay}), {@code tlsKeyStore} and {@code tlsKeyStorePassword} (HTTPS),
 * {@code tlsStoreType}, {@code httpThreads}.
 */
public class HessianCacheManagerPeerListenerFactory extends EhrelayPeerListenerFactory {

    public HessianCacheManagerPeerListenerFactory() {
        super(HessianSettings.SCHEME, HessianSettings.NAME);
    }

    @Override
    protected TransportSettings readTransportProperties(PropertyReader reader) {
        return HessianListenerSettings.read(reader);
    }
}
