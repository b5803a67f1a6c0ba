package io.ehrelay.loopback;

import io.ehrelay.provider.EhrelayPeerListenerFactory;

/** Peer listener of the in-memory loopback transport ({@code hostName} and {@code port} are accepted, unused). */
public class LoopbackCacheManagerPeerListenerFactory extends EhrelayPeerListenerFactory {

    public LoopbackCacheManagerPeerListenerFactory() {
        super(Loopback.SCHEME, Loopback.NAME);
    }
}
