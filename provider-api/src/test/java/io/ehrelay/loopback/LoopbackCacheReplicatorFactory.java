package io.ehrelay.loopback;

import io.ehrelay.provider.EhrelayReplicatorFactory;

/** Replicator factory of the in-memory loopback transport. */
public class LoopbackCacheReplicatorFactory extends EhrelayReplicatorFactory {

    public LoopbackCacheReplicatorFactory() {
        super(Loopback.SCHEME, Loopback.PROVIDER);
    }
}
