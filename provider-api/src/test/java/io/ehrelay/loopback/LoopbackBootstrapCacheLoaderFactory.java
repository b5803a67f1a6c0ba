package io.ehrelay.loopback;

import io.ehrelay.provider.EhrelayBootstrapLoaderFactory;

/** Bootstrap loader factory of the in-memory loopback transport. */
public class LoopbackBootstrapCacheLoaderFactory extends EhrelayBootstrapLoaderFactory {
    @Override
    protected String scheme() {
        return Loopback.SCHEME;
    }

    @Override
    protected String providerFactoryClassName() {
        return Loopback.PROVIDER;
    }
}
