package io.ehrelay.loopback;

import io.ehrelay.provider.EhrelayBootstrapLoaderFactory;

/** Bootstrap loader factory of the in-memory loopback transport. */
public class LoopbackBootstrapCacheLoaderFactory extends EhrelayBootstrapLoaderFactory {

    public LoopbackBootstrapCacheLoaderFactory() {
        super(Loopback.SCHEME, Loopback.PROVIDER);
    }
}
