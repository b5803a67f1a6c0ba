package io.ehrelay.tcp;

import io.ehrelay.provider.EhrelayPeerListenerFactory;

/** {@code cacheManagerPeerListenerFactory} of the TCP transport: {@code hostName}, {@code port} (0 = any free). */
public class TcpCacheManagerPeerListenerFactory extends EhrelayPeerListenerFactory {

    public TcpCacheManagerPeerListenerFactory() {
        super(TcpSettings.SCHEME, TcpSettings.NAME);
    }
}
