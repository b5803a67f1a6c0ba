package io.ehrelay.tcp;

import io.ehrelay.provider.EhrelayBootstrapLoaderFactory;

/** {@code bootstrapCacheLoaderFactory} of the TCP transport: {@code bootstrapAsynchronously}, {@code maximumChunkSizeBytes}. */
public class TcpBootstrapCacheLoaderFactory extends EhrelayBootstrapLoaderFactory {

    public TcpBootstrapCacheLoaderFactory() {
        super(TcpSettings.SCHEME, TcpCacheManagerPeerProviderFactory.class.getName());
    }
}
