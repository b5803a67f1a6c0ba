package io.ehrelay.internal.engine;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.internal.config.DiscoveryConfig;
import io.ehrelay.internal.discovery.DnsDiscovery;
import io.ehrelay.internal.discovery.MulticastHeartbeat;
import io.ehrelay.internal.discovery.PeerDirectory;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Transport;

/**
 * How a node finds its peers: the {@link PeerDirectory} (manual peers, normalized by the transport, and what
 * discovery adds), and the discovery {@code peerDiscovery} names — multicast heartbeats or DNS — started once the
 * transport listens. Not thread-safe: the node starts and stops it under its lock.
 */
final class NodeDiscovery {

    final PeerDirectory directory;
    private final DiscoveryConfig config;
    private final Transport transport;
    private MulticastHeartbeat heartbeat;
    private DnsDiscovery dns;

    NodeDiscovery(DiscoveryConfig config, Transport transport) {
        this.config = config;
        this.transport = transport;
        List<String> manual = new ArrayList<>();
        for (String entry : config.manualPeers()) {
            String endpoint = transport.normalizePeer(entry);
            if (!manual.contains(endpoint)) {
                manual.add(endpoint);
            }
        }
        this.directory = new PeerDirectory(manual, config.peerTimeoutMillis());
    }

    void start(String transportName, NodeThreads threads, ReplicationMetrics metrics, Clock clock) throws IOException {
        if (config.mode() == DiscoveryConfig.Mode.AUTOMATIC) {
            heartbeat = new MulticastHeartbeat(config, transportName, transport::localEndpoint, directory,
                    threads.factory("heartbeat"), metrics.meter(MetricNames.MALFORMED_HEARTBEATS),
                    transport.heartbeatFormat(), clock);
            heartbeat.start();
        } else if (config.mode() == DiscoveryConfig.Mode.DNS) {
            dns = new DnsDiscovery(config.dnsName(), config.dnsPort(), config.dnsIntervalMillis(), DnsDiscovery.SYSTEM,
                    directory, transport::endpointAt, threads.factory("dns"), clock);
            dns.start(transport.localPort());
        }
    }

    void stop() {
        if (dns != null) {
            dns.stop();
        }
        if (heartbeat != null) {
            heartbeat.stop();
        }
    }
}
