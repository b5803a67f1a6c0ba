package io.ehrelay.jgroups;

import io.ehrelay.provider.EhrelayBootstrapLoaderFactory;

/** {@code bootstrapCacheLoaderFactory} of the JGroups transport (as in the old module; the state comes from one member, in chunks, another member when it leaves): {@code bootstrapAsynchronously}, {@code maximumChunkSizeBytes}. */
public class JGroupsBootstrapCacheLoaderFactory extends EhrelayBootstrapLoaderFactory {

    public JGroupsBootstrapCacheLoaderFactory() {
        super(JGroupsSettings.SCHEME, JGroupsCacheManagerPeerProviderFactory.class.getName());
    }
}
