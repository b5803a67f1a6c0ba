package io.ehrelay.internal.engine;

import java.util.Collection;
import java.util.concurrent.ThreadFactory;

import io.ehrelay.spi.Clock;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.PeerGate;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.spi.TransportMetrics;

/** What a transport sees of its node (a configured one). Thread-safe. */
final class NodeContext implements TransportContext {

    private final ReplicationNode node;
    private final NodeThreads threads;
    private final PeerGate gate;

    NodeContext(ReplicationNode node, NodeThreads threads, PeerGate gate) {
        this.node = node;
        this.threads = threads;
        this.gate = gate;
    }

    @Override
    public InboundHandler inbound() {
        return node.inbound();
    }

    @Override
    public ThreadFactory threads(String role) {
        return threads.factory(role);
    }

    @Override
    public int maxFrameBytes() {
        return node.config().limits().maxFrameBytes();
    }

    @Override
    public ListenerConfig listener() {
        return node.listener();
    }

    @Override
    public TransportMetrics metrics() {
        return node.metrics();
    }

    @Override
    public String cacheManagerName() {
        return node.cacheManager().getName();
    }

    @Override
    public PeerGate peerGate() {
        return gate;
    }

    @Override
    public ClusterSecret clusterSecret() {
        return node.config().clusterSecret();
    }

    @Override
    public Clock clock() {
        return node.clock();
    }

    @Override
    public void setPeers(Collection<String> endpoints) {
        node.replacePeers(endpoints);
    }

    @Override
    public void resyncFrom(String peerEndpoint) {
        node.replication().resyncFrom(peerEndpoint);
    }
}
