package io.ehrelay.loopback;

import io.ehrelay.provider.EhrelayPeerListenerFactory;

/** Peer listener of the in-memory loopback transport ({@code hostName} and {@code port} are accepted, unused). */
public class LoopbackCacheManagerPeerListenerFactory extends EhrelayPeerListenerFactory {
    @Override
    protected String scheme() {
        return Loopback.SCHEME;
    }

    @Override
    protected String transportName() {
        return Loopback.NAME;
    }
}
