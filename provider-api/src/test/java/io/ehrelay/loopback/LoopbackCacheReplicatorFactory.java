package io.ehrelay.loopback;

import io.ehrelay.provider.EhrelayReplicatorFactory;

/** Replicator factory of the in-memory loopback transport. */
public class LoopbackCacheReplicatorFactory extends EhrelayReplicatorFactory {
    @Override
    protected String scheme() {
        return Loopback.SCHEME;
    }

    @Override
    protected String providerFactoryClassName() {
        return Loopback.PROVIDER;
    }
}
