package io.ehrelay.provider;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;

import io.ehrelay.internal.config.DiscoveryConfig;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.distribution.CachePeer;
import net.sf.ehcache.management.ManagedCacheManagerPeerProvider;

/**
 * The CacheManager's peer provider: starts and stops the node, answers who the peers are, and exposes the
 * metrics to the MBeanServer Ehcache's {@code ManagementService} hands it. {@code registerPeer} and
 * {@code unregisterPeer} take transport endpoints ({@code host:port} for TCP).
 */
class EhrelayPeerProvider implements ManagedCacheManagerPeerProvider {

    /** At most this long, in all, does {@link #listRemoteCachePeers} wait for first connection attempts. */
    static final long FIRST_ATTEMPT_WAIT_MILLIS = 2000;

    private final ReplicationNode node;

    EhrelayPeerProvider(ReplicationNode node) {
        this.node = node;
    }

    public ReplicationNode node() {
        return node;
    }

    @Override
    public void registerPeer(String endpoint) {
        node.replication().registerPeer(endpoint);
    }

    @Override
    public void unregisterPeer(String endpoint) {
        node.replication().unregisterPeer(endpoint);
    }

    /**
     * The peers this node reaches now that hold {@code cache}, as Ehcache's {@code CachePeer}s of it (see
     * {@link RemoteCachePeer}). A configured peer that cannot be reached is left out until it can be — the
     * transport keeps trying it in the background — as stock drops a peer whose lookup fails; so is a peer that
     * said it does not hold the cache (it removed it, or never had it). Right after start, a peer whose first
     * connection attempt is still under way is waited for (at most {@value #FIRST_ATTEMPT_WAIT_MILLIS} ms in all),
     * as stock looks a peer up when asked: a health check run then does not report "no peers".
     */
    @Override
    @SuppressWarnings("rawtypes")
    public List listRemoteCachePeers(Ehcache cache) throws CacheException {
        List<CachePeer> out = new ArrayList<>();
        Transport transport = node.transport();
        Clock clock = node.clock();
        long deadline = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FIRST_ATTEMPT_WAIT_MILLIS);
        for (Peer p : node.peers()) {
            if (transport != null && reachable(transport, p, clock, deadline)
                    && node.replication().peerHolds(p.endpoint(), cache.getName())) {
                out.add(new RemoteCachePeer(cache.getName(), p.endpoint()));
            }
        }
        return out;
    }

    private static boolean reachable(Transport transport, Peer p, Clock clock, long deadlineNanos) {
        try {
            long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - clock.nanoTime());
            return left > 0 ? transport.isReachableWithin(p, left) : transport.isReachable(p);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return transport.isReachable(p);
        }
    }

    @Override
    public void init() {
        node.start();
    }

    @Override
    public void dispose() throws CacheException {
        node.stop();
    }

    /**
     * Manual discovery, DNS (looked up once before the start returns), or a transport that knows its peers once
     * started (JGroups' view): 0. Automatic: long enough to hear two heartbeats.
     */
    @Override
    public long getTimeForClusterToForm() {
        DiscoveryConfig d = node.config().discovery();
        Transport t = node.transport();
        if (d.mode() == DiscoveryConfig.Mode.MANUAL || d.mode() == DiscoveryConfig.Mode.DNS
                || (t != null && t.knowsPeersOnceStarted())) {
            return 0;
        }
        return 2 * d.heartbeatIntervalMillis() + 200;
    }

    @Override
    public String getScheme() {
        return node.scheme();
    }

    @Override
    public void register(MBeanServer mBeanServer) {
        if (node.config().registerJmx()) {
            node.metrics().registerWith(mBeanServer);
        }
    }
}
