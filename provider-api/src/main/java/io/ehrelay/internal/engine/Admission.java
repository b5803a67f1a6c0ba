package io.ehrelay.internal.engine;

import java.net.InetAddress;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.config.UnauthenticatedPeers;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.PeerGate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whom a node accepts without authentication ({@code unauthenticatedPeers}): the {@link PeerGate} its transport
 * asks, which counts and logs every refusal, and the start-up line that says whom the node accepts. Thread-safe.
 */
final class Admission implements PeerGate {

    private static final Logger LOG = LoggerFactory.getLogger(Admission.class);

    private final UnauthenticatedPeers peers;
    private final ReplicationMetrics metrics;
    private final RateLimitedLog warn;
    private final String transportName;
    private final String cacheManager;

    Admission(UnauthenticatedPeers peers, ReplicationMetrics metrics, RateLimitedLog warn, String transportName,
              String cacheManager) {
        this.peers = peers;
        this.metrics = metrics;
        this.warn = warn;
        this.transportName = transportName;
        this.cacheManager = cacheManager;
    }

    @Override
    public boolean admits(InetAddress address, String what) {
        if (peers.admits(address)) {
            return true;
        }
        metrics.meter(MetricNames.UNAUTHORIZED).mark();
        warn.warn("unauthorized:" + address.getHostAddress(), "ehrelay: refused an unauthenticated {} from {} to "
                + "{} replication of CacheManager {} (counted in unauthorized): unauthenticated peers are accepted "
                + "only from {}. To accept this host, add it to unauthenticatedPeers on cacheManagerPeerProviderFactory "
                + "(unauthenticatedPeers={}|{})", what, address.getHostAddress(), transportName, cacheManager,
                peers.setting(), peers.setting(), address.getHostAddress());
        return false;
    }

    @Override
    public boolean admitsOtherHosts() {
        return peers.admitsOtherHosts();
    }

    /**
     * Says at start whom the node at {@code endpoint} accepts ({@code null}: it has no listener, nothing to say).
     *
     * @param auth how the transport authenticates peers ({@code Transport.peerAuthentication}), or {@code null}
     */
    void logAt(String endpoint, String auth) {
        if (endpoint == null) {
            return;
        }
        if (auth != null && peers.admitsNone()) {
            LOG.info("ehrelay: {} replication of CacheManager {} at {} accepts only peers that authenticate ({})",
                    transportName, cacheManager, endpoint, auth);
        } else if (auth != null && !peers.any()) {
            LOG.info("ehrelay: {} replication of CacheManager {} at {} accepts peers that authenticate ({}), and "
                    + "where the transport lets peers in without (e.g. stock RMI nodes) only from {} "
                    + "(unauthenticatedPeers)", transportName, cacheManager, endpoint, auth, peers.setting());
        } else if (peers.any()) {
            LOG.warn("ehrelay: {} replication of CacheManager {} at {} accepts unauthenticated peers from any host "
                    + "(unauthenticatedPeers=any): any process that reaches that address can read, change and clear "
                    + "its replicated caches", transportName, cacheManager, endpoint);
        } else if (peers.addresses().isEmpty()) {
            LOG.info("ehrelay: {} replication of CacheManager {} at {} accepts unauthenticated peers only from this "
                    + "host: other hosts are refused and counted in unauthorized. To accept them, list their "
                    + "addresses in unauthenticatedPeers (or unauthenticatedPeers=any) on cacheManagerPeerProviderFactory",
                    transportName, cacheManager, endpoint);
        } else {
            LOG.info("ehrelay: {} replication of CacheManager {} at {} accepts unauthenticated peers only from {}{}; "
                    + "other hosts are refused and counted in unauthorized (unauthenticatedPeers)", transportName,
                    cacheManager, endpoint, peers.loopback() ? "this host and " : "", peers.addresses());
        }
    }
}
