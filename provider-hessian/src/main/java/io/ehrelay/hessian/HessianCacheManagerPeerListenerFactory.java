package io.ehrelay.hessian;

import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerListenerFactory;
import io.ehrelay.spi.TransportSettings;

/**
 * {@code cacheManagerPeerListenerFactory} of the Hessian/HTTP transport: {@code hostName}, {@code port} (0 = any
 * free port), {@code path} (default {@code /ehrelay}), {@code tlsKeyStore} and {@code tlsKeyStorePassword} (HTTPS),
 * {@code tlsTrustStore} and {@code tlsTrustStorePassword} (the client certificates it accepts), {@code tlsStoreType},
 * {@code tlsClientAuth} (default {@code true} with HTTPS), {@code httpThreads}, {@code maxHttpThreads},
 * {@code requestReadMillis}.
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
