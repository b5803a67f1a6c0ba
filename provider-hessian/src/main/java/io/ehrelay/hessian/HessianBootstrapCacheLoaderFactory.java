package io.ehrelay.hessian;

import io.ehrelay.provider.EhrelayBootstrapLoaderFactory;

/** {@code bootstrapCacheLoaderFactory} of the Hessian/HTTP transport: {@code bootstrapAsynchronously}, {@code maximumChunkSizeBytes}. */
public class HessianBootstrapCacheLoaderFactory extends EhrelayBootstrapLoaderFactory {

    public HessianBootstrapCacheLoaderFactory() {
        super(HessianSettings.SCHEME, HessianCacheManagerPeerProviderFactory.class.getName());
    }
}
