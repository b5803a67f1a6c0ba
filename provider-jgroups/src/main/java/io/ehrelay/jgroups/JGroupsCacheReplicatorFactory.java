package io.ehrelay.jgroups;

import io.ehrelay.provider.EhrelayReplicatorFactory;

/**
 * {@code cacheEventListenerFactory} of the JGroups transport, a drop-in for the old module's
 * {@code JGroupsCacheReplicatorFactory}: its properties ({@code replicatePuts}, {@code replicateUpdates},
 * {@code replicateUpdatesViaCopy}, {@code replicateRemovals}, {@code replicateAsynchronously},
 * {@code asynchronousReplicationIntervalMillis}) plus the stock RMI ones it lacked ({@code replicatePutsViaCopy},
 * {@code asynchronousReplicationMaximumBatchSize}) and ehrelay's.
 */
public class JGroupsCacheReplicatorFactory extends EhrelayReplicatorFactory {

    public JGroupsCacheReplicatorFactory() {
        super(JGroupsSettings.SCHEME, JGroupsCacheManagerPeerProviderFactory.class.getName());
    }
}
