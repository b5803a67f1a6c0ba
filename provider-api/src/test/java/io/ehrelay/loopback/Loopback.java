package io.ehrelay.loopback;

/** Names of the loopback transport. */
final class Loopback {
    static final String SCHEME = "ehrelay-loopback";
    static final String NAME = "loopback";
    static final String PROVIDER = LoopbackCacheManagerPeerProviderFactory.class.getName();

    private Loopback() {
    }
}
