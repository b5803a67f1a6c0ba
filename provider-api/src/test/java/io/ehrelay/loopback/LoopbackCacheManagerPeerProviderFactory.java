package io.ehrelay.loopback;

import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerProviderFactory;
import io.ehrelay.spi.Transport;

/** Peer provider of the in-memory loopback transport. */
public class LoopbackCacheManagerPeerProviderFactory extends EhrelayPeerProviderFactory {
    @Override
    protected String scheme() {
        return Loopback.SCHEME;
    }

    @Override
    protected String transportName() {
        return Loopback.NAME;
    }

    @Override
    protected Transport createTransport(PropertyReader reader, NodeConfig nodeConfig) {
        return new LoopbackTransport();
    }
}
