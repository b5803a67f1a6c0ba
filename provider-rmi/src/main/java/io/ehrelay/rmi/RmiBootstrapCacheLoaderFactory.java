package io.ehrelay.rmi;

import io.ehrelay.provider.EhrelayBootstrapLoaderFactory;

/**
 * {@code bootstrapCacheLoaderFactory} of the RMI transport: {@code bootstrapAsynchronously},
 * {@code maximumChunkSizeBytes}. Loads from an ehrelay peer through its relay, from a stock peer with
 * {@code getKeys}/{@code getElements}.
 */
public class RmiBootstrapCacheLoaderFactory extends EhrelayBootstrapLoaderFactory {

    public RmiBootstrapCacheLoaderFactory() {
        super(RmiSettings.SCHEME, RmiCacheManagerPeerProviderFactory.class.getName());
    }
}
