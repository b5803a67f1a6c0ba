package io.ehrelay.spi;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The only thing a transport module supplies: moving bytes between nodes.
 *
 * <p>Lifecycle: provider-api creates one transport per CacheManager, calls {@link #start} once when the
 * CacheManager initialises its peer provider, and {@link #stop} once when it shuts down (after the replication
 * queue drained). After {@code stop} every future a transport returned must be complete and every thread it
 * created must end. Implementations must be thread-safe: any number of threads may call {@link #send}.
 */
public interface Transport {

    /** Starts listening (when {@link TransportContext#listener()} is set) and readies outbound connections. */
    void start(TransportContext context) throws Exception;

    /** The endpoint other nodes use to reach this one, or {@code null} when it does not listen. */
    String localEndpoint();

    /**
     * Sends an event batch to one peer, preserving order per peer.
     *
     * <p>With {@code acknowledge=false} the future completes when the bytes were handed to the network (or
     * failed); with {@code true} when the peer applied the batch. The call itself must not block the caller for
     * long: a peer that is down or slow fails the future instead (the dispatcher counts it).
     */
    CompletableFuture<Void> send(Peer peer, Batch batch, boolean acknowledge);

    /**
     * Whether this transport keeps a batch's bytes beyond the send and would rather keep the elements' own value
     * arrays than a copy of them ({@link Batch#pieces()}): the dispatcher then names, in each batch, the
     * {@code byte[]} values of at least 1,024 bytes that it holds. {@code false} by default: the batch names none,
     * and {@link Batch#pieces()} is one array.
     */
    default boolean sendsValuesByReference() {
        return false;
    }

    /**
     * Whether the dispatcher encodes this transport's batches in heap arrays instead of direct memory: for a
     * transport that hands each batch to an {@code OutputStream} ({@link Batch#writeTo}), which then takes the
     * batch's own array instead of a copy of it staged through a scratch array. {@code false} by default: a
     * transport that writes to NIO channels wants direct memory, which the channel writes without a copy.
     */
    default boolean encodesOnHeap() {
        return false;
    }

    /**
     * Asks a peer for a cache's content. Chunks (event batches of PUT events) are handed to {@code sink} in
     * order, on a transport thread; the future completes when the peer has sent everything, or fails.
     */
    CompletableFuture<Void> requestState(Peer peer, String cacheName, int maxChunkBytes,
                                         InboundHandler.ChunkSink sink);

    /**
     * Whether the transport knows {@code peer} to be a stock Ehcache node, which it talks to in Ehcache's own format:
     * such a node serves no anti-entropy digests and its writes are ordered on arrival, so anti-entropy leaves it
     * out. A peer not reached yet is not known to be one. {@code false} by default.
     */
    default boolean isStockNode(Peer peer) {
        return false;
    }

    /** Whether the transport currently believes the peer can be reached (e.g. it holds a live connection). */
    boolean isReachable(Peer peer);

    /**
     * {@link #isReachable}, after waiting up to {@code millis} for the first connection attempt to the peer when it
     * is still under way (right after start, as stock Ehcache looks a peer up when asked for it). Does not wait
     * once an attempt has ended. By default, does not wait.
     */
    default boolean isReachableWithin(Peer peer, long millis) throws InterruptedException {
        return isReachable(peer);
    }

    /**
     * The current peers, called after {@link #start} and whenever the peer directory changes, so that a
     * transport can connect ahead of the first event and let go of peers that left. Optional.
     */
    default void peersChanged(List<Peer> peers) {
    }

    /**
     * The peer endpoint for a configured manual peer entry or a {@code registerPeer} argument, so that several
     * spellings of one node (e.g. one stock {@code rmiUrls} entry per cache) name one peer. Identity by default.
     *
     * @throws IllegalArgumentException when the entry does not name a peer
     */
    default String normalizePeer(String configured) {
        return configured;
    }

    /**
     * The endpoint of a peer listening at {@code host} (a name or an address, as a DNS answer gives it) and
     * {@code port}, spelled as this node's own ({@link #localEndpoint()}: same scheme and path): what
     * {@code peerDiscovery=dns} lists for each answer. Called after {@link #start}.
     *
     * @throws UnsupportedOperationException when this transport's peers cannot be found by DNS
     */
    default String endpointAt(String host, int port) {
        throw new UnsupportedOperationException("this transport does not support peerDiscovery=dns");
    }

    /**
     * Every socket this node listens on and what it is for, e.g. {@code "127.0.0.1:40001 (peers' connections)"}
     * (after {@link #start}; logged once at start, so that an operator knows which ports to open), or
     * {@code null} when it listens nowhere.
     */
    default String listeningOn() {
        return null;
    }

    /** The port this node listens on (after {@link #start}), or -1 when it has none of its own. */
    default int localPort() {
        return -1;
    }

    /**
     * Whether {@code registerPeer}/{@code unregisterPeer} change this transport's peers. {@code false} for a
     * transport whose members find each other themselves (JGroups: the channel's view): the calls are then
     * ignored, with one WARN saying where membership comes from, as stock {@code ehcache-jgroupsreplication}
     * ignores them.
     */
    default boolean registersPeers() {
        return true;
    }

    /**
     * Whether the peers are known once {@link #start} returns ({@code true} for a transport whose start joins a
     * group and receives its members, as JGroups' connect does). A bootstrap then does not wait for the cluster
     * to form (Ehcache's {@code getTimeForClusterToForm} is 0): a node alone at start has no one to load from.
     * {@code false} by default: heartbeats take their time.
     */
    default boolean knowsPeersOnceStarted() {
        return false;
    }

    /**
     * The endpoint of the node that sent a batch, from the {@code fromPeer} the transport gave
     * {@link InboundHandler#onEvents} (which may add detail for logs): what a resync from that node addresses.
     * Identity by default.
     */
    default String peerOf(String fromPeer) {
        return fromPeer;
    }

    /**
     * The transport's own automatic-discovery packets (e.g. Ehcache's RMI heartbeat), or {@code null} for
     * ehrelay's heartbeat. Called once, after {@link #start}.
     */
    default HeartbeatFormat heartbeatFormat() {
        return null;
    }

    /**
     * How peers prove who they are on this transport as configured (e.g. {@code "TLS client certificates"}), or
     * {@code null} when they do not: then only the hosts {@link TransportContext#peerGate()} admits are served.
     * Said once at start. Called after {@link #start}.
     */
    default String peerAuthentication() {
        return null;
    }

    /**
     * Whether this transport authenticates peers with {@link TransportContext#clusterSecret()}. A node whose
     * {@code clusterSecret} is set refuses to start with a transport that does not.
     */
    default boolean provesClusterSecret() {
        return false;
    }

    /** A cache that replicates through this transport is live on this node (may be called more than once). */
    default void cacheAdded(String cacheName) {
    }

    /** A cache was removed from this node. */
    default void cacheRemoved(String cacheName) {
    }

    /** Stops listening, closes connections, fails outstanding futures and ends the transport's threads. */
    void stop();
}
