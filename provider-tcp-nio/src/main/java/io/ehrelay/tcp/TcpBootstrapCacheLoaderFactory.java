package io.ehrelay.tcp;

import io.ehrelay.provider.EhrelayBootstrapLoaderFactory;

/** {@code bootstrapCacheLoaderFactory} of the TCP transport: {@code bootstrapAsynchronously}, {@code maximumChunkSizeBytes}. */
public class TcpBootstrapCacheLoaderFactory extends EhrelayBootstrapLoaderFactory {

    @Override
    protected String scheme() {
        return TcpSettings.SCHEME;
    }

    @Override
    protected String providerFactoryClassName() {
        return TcpCacheManagerPeerProviderFactory.class.getName();
    }
}
