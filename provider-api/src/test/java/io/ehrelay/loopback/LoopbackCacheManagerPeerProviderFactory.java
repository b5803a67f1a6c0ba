package io.ehrelay.loopback;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerProviderFactory;
import io.ehrelay.spi.Transport;

/** Peer provider of the in-memory loopback transport. */
public class LoopbackCacheManagerPeerProviderFactory extends EhrelayPeerProviderFactory {

    public LoopbackCacheManagerPeerProviderFactory() {
        super(Loopback.SCHEME, Loopback.NAME, "peers");
    }

    @Override
    protected Transport createTransport(PropertyReader reader, NodeConfig nodeConfig) {
        return new LoopbackTransport();
    }
}
