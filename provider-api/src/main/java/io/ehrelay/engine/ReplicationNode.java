package io.ehrelay.engine;

import io.ehrelay.internal.Futures;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ehrelay.codec.CodecLimits;
import io.ehrelay.codec.EventCodec;
import io.ehrelay.codec.MalformedFrameException;
import io.ehrelay.codec.ReplicationEvent;
import io.ehrelay.config.BootstrapConfig;
import io.ehrelay.config.DiscoveryConfig;
import io.ehrelay.config.ListenerConfig;
import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.ReplicatorConfig;
import io.ehrelay.config.SyncFailurePolicy;
import io.ehrelay.discovery.MulticastHeartbeat;
import io.ehrelay.discovery.PeerDirectory;
import io.ehrelay.metrics.CacheMetrics;
import io.ehrelay.metrics.ReplicationMetrics;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import io.ehrelay.spi.TransportContext;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.Status;

/**
 * The replication engine of one CacheManager and one transport: queue, dispatcher, peer directory, discovery,
 * metrics and the transport itself, shared by every cache of that CacheManager.
 *
 * <p>Lifecycle, driven by Ehcache: the listener and provider factories {@link #obtain} the node and configure
 * it; the provider's {@code init()} calls {@link #start()}; the provider's {@code dispose()} (after every cache
 * was disposed) calls {@link #stop()}, which drains the queue up to {@code shutdownDrainMillis}, stops the
 * transport and discovery, waits for every ehrelay thread and unregisters the MBeans. Thread-safe.
 */
public final class ReplicationNode implements InboundHandler {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationNode.class);
    private static final Map<CacheManager, Map<String, ReplicationNode>> NODES = new IdentityHashMap<>();

    /** Node states. */
    private enum State { NEW, STARTED, STOPPED }

    private final CacheManager cacheManager;
    private final String scheme;
    private final String transportName;
    private final NodeThreads threads;
    private final ReplicationMetrics metrics;
    private final RateLimitedLog warn = new RateLimitedLog(LOG, 10_000);
    private final Map<String, CacheBinding> bindings = new ConcurrentHashMap<>();
    private final Map<String, Ehcache> initializing = new ConcurrentHashMap<>();
    private volatile State state = State.NEW;
    private volatile boolean scannedCaches;
    private NodeConfig config;
    private Transport transport;
    private ListenerConfig listener;
    private PeerDirectory directory;
    private ReplicationQueue queue;
    private Dispatcher dispatcher;
    private MulticastHeartbeat heartbeat;
    private ThreadPoolExecutor bootstrapExecutor;

    // ---- convergence: gaps, losses and resynchronisation (see onEvents, behind, resyncFrom) -------------------
    /** Per sender stream: the number of the last batch applied from it. */
    private final Map<Long, Long> lastSeq = new ConcurrentHashMap<>();
    /** Peers that may be missing events of this node (a send to them failed, or this node dropped events). */
    private final java.util.Set<String> owes = ConcurrentHashMap.newKeySet();
    /** Peers a resync from is queued or running. */
    private final java.util.Set<String> resyncPending = ConcurrentHashMap.newKeySet();
    /** Caches being resynchronised: the keys live events touched meanwhile (those the snapshot must not undo). */
    private final Map<String, ResyncTrack> resyncing = new ConcurrentHashMap<>();

    private ReplicationNode(CacheManager cacheManager, String scheme, String transportName) {
        this.cacheManager = cacheManager;
        this.scheme = scheme;
        this.transportName = transportName;
        this.threads = new NodeThreads(transportName, cacheManager.getName());
        this.metrics = new ReplicationMetrics(cacheManager.getName(), transportName);
    }

    /** The node of {@code cacheManager} for {@code scheme}, created (unconfigured) if there is none yet. */
    public static ReplicationNode obtain(CacheManager cacheManager, String scheme, String transportName) {
        synchronized (NODES) {
            return NODES.computeIfAbsent(cacheManager, cm -> new ConcurrentHashMap<>())
                    .computeIfAbsent(scheme, s -> new ReplicationNode(cacheManager, scheme, transportName));
        }
    }

    /** The node of {@code cacheManager} for {@code scheme}, or {@code null}. */
    public static ReplicationNode find(CacheManager cacheManager, String scheme) {
        synchronized (NODES) {
            Map<String, ReplicationNode> m = NODES.get(cacheManager);
            return m == null ? null : m.get(scheme);
        }
    }

    /** Every node of {@code cacheManager} (one per ehrelay transport it configures). */
    public static List<ReplicationNode> all(CacheManager cacheManager) {
        synchronized (NODES) {
            Map<String, ReplicationNode> m = NODES.get(cacheManager);
            return m == null ? Collections.emptyList() : new ArrayList<>(m.values());
        }
    }

    private static void forget(ReplicationNode node) {
        synchronized (NODES) {
            Map<String, ReplicationNode> m = NODES.get(node.cacheManager);
            if (m != null && m.get(node.scheme) == node) {
                m.remove(node.scheme);
                if (m.isEmpty()) {
                    NODES.remove(node.cacheManager);
                }
            }
        }
    }

    /** Called by the provider factory: the node's settings and its transport. */
    public synchronized void configure(NodeConfig nodeConfig, Transport nodeTransport) {
        if (config != null) {
            throw new CacheException("ehrelay: CacheManager " + cacheManager.getName() + " configures two "
                    + scheme + " peer providers");
        }
        this.config = nodeConfig;
        this.transport = nodeTransport;
        DiscoveryConfig d = nodeConfig.discovery();
        List<String> manual = new ArrayList<>();
        for (String entry : d.manualPeers()) {
            String endpoint = nodeTransport.normalizePeer(entry);
            if (!manual.contains(endpoint)) {
                manual.add(endpoint);
            }
        }
        this.directory = new PeerDirectory(manual, d.peerTimeoutMillis());
        this.queue = new ReplicationQueue(nodeConfig.dispatcherThreads(), nodeConfig.queueMaxBytes(),
                nodeConfig.queueMaxEvents(), nodeConfig.overflowPolicy(), nodeConfig.overflowBlockMillis());
        metrics.gauge("queueCapacityBytes", nodeConfig::queueMaxBytes);
        metrics.gauge("queueCapacityEvents", nodeConfig::queueMaxEvents);
        metrics.gauge("queueHighWaterBytes", queue::highWaterBytes);
        metrics.gauge("queueHighWaterEvents", queue::highWaterEvents);
        metrics.gauge("peersKnown", () -> directory.peers().size());
        metrics.gauge("peersReachable", this::reachablePeers);
        metrics.gauge("threads", threads::live);
        metrics.meter("resyncs");
        metrics.meter("resyncFailures");
        metrics.meter("gaps");
        metrics.meter("duplicateBatches");
    }

    /** Called by the listener factory: where this node listens. */
    public synchronized void setListener(ListenerConfig listenerConfig) {
        this.listener = listenerConfig;
    }

    public synchronized void start() {
        if (state != State.NEW) {
            return;
        }
        if (config == null) {
            throw new CacheException("ehrelay: CacheManager " + cacheManager.getName() + " has a " + scheme
                    + " peer listener but no " + scheme + " cacheManagerPeerProviderFactory");
        }
        try {
            transport.start(new Context());
            directory.setSelf(transport.localEndpoint());
            directory.onChange(transport::peersChanged);
            dispatcher = new Dispatcher(queue, config, directory::peers, transport, metrics,
                    threads.factory("dispatcher"), warn, peer -> owes.add(peer.endpoint()));
            dispatcher.start();
            if (config.discovery().mode() == DiscoveryConfig.Mode.AUTOMATIC) {
                heartbeat = new MulticastHeartbeat(config.discovery(), transportName, transport::localEndpoint,
                        directory, threads.factory("heartbeat"), metrics.meter("malformedHeartbeats"),
                        transport.heartbeatFormat());
                heartbeat.start();
            }
            if (config.registerJmx()) {
                metrics.registerWith(ManagementFactory.getPlatformMBeanServer());
            }
        } catch (Exception | LinkageError e) {
            state = State.STOPPED;
            shutdown(0);
            throw new CacheException("ehrelay: could not start " + transportName + " replication for CacheManager "
                    + cacheManager.getName() + ": " + e.getMessage(), e);
        }
        state = State.STARTED;
        for (String name : cacheManager.getCacheNames()) {
            bindIfReplicated(name);
        }
        LOG.info("ehrelay: {} replication of CacheManager {} started at {}", transportName, cacheManager.getName(),
                transport.localEndpoint());
    }

    public void stop() {
        synchronized (this) {
            if (state == State.STOPPED) {
                return;
            }
            state = State.STOPPED;
        }
        shutdown(config == null ? 0 : config.shutdownDrainMillis());
    }

    /** Drains (up to {@code drainMillis}) and stops whatever started, waits for the threads, drops the MBeans. */
    private void shutdown(long drainMillis) {
        if (dispatcher != null) {
            dispatcher.stop(drainMillis);
        }
        if (heartbeat != null) {
            heartbeat.stop();
        }
        if (transport != null) {
            try {
                transport.stop();
            } catch (RuntimeException e) {
                LOG.warn("ehrelay: stopping the {} transport failed", transportName, e);
            }
        }
        synchronized (this) {
            if (bootstrapExecutor != null) {
                bootstrapExecutor.shutdownNow();
            }
        }
        List<String> alive = threads.awaitTermination(5000);
        if (!alive.isEmpty()) {
            LOG.warn("ehrelay: threads still running after shutdown of CacheManager {}: {}", cacheManager.getName(),
                    alive);
        }
        metrics.close();
        forget(this);
    }

    public boolean isAlive() {
        return state == State.STARTED;
    }

    public Status status() {
        return state == State.STARTED ? Status.STATUS_ALIVE
                : state == State.NEW ? Status.STATUS_UNINITIALISED : Status.STATUS_SHUTDOWN;
    }

    public String scheme() {
        return scheme;
    }

    public CacheManager cacheManager() {
        return cacheManager;
    }

    public ReplicationMetrics metrics() {
        return metrics;
    }

    public synchronized NodeConfig config() {
        return config;
    }

    public synchronized ListenerConfig listener() {
        return listener;
    }

    /** This node's endpoint, or {@code null} before start or without a listener. */
    public String localEndpoint() {
        Transport t = transport;
        return t == null || state == State.NEW ? null : t.localEndpoint();
    }

    public PeerDirectory directory() {
        return directory;
    }

    public List<Peer> peers() {
        PeerDirectory d = directory;
        return d == null ? Collections.emptyList() : d.peers();
    }

    private int reachablePeers() {
        int n = 0;
        for (Peer p : directory.peers()) {
            if (transport.isReachable(p)) {
                n++;
            }
        }
        return n;
    }

    /** The transport, for tests and transport-level diagnostics. */
    public Transport transport() {
        return transport;
    }

    // ---- sending -------------------------------------------------------------------------------------------

    /**
     * The per-cache view the replicators use: metrics and queue lane. The first call also registers the
     * metrics of every other cache that replicates through this node, so operators see them all at once.
     */
    public CacheBinding bind(String cacheName) {
        CacheBinding b = bindings.get(cacheName);
        if (b != null) {
            return b;
        }
        b = bindings.computeIfAbsent(cacheName, n -> new CacheBinding(n, metrics.cache(n),
                (n.hashCode() & 0x7fffffff) % config.dispatcherThreads()));
        if (!scannedCaches) {
            scannedCaches = true;
            for (String name : cacheManager.getCacheNames()) {
                bindIfReplicated(name);
            }
        }
        return b;
    }

    /** Registers a cache's metrics if one of its listeners is a replicator of this node's scheme. */
    public void bindIfReplicated(String cacheName) {
        Ehcache cache;
        try {
            cache = cacheManager.getEhcache(cacheName);
        } catch (IllegalStateException e) {
            return;
        }
        if (cache == null) {
            return;
        }
        for (Object listener : cache.getCacheEventNotificationService().getCacheEventListeners()) {
            if (listener instanceof io.ehrelay.provider.EhrelayReplicator
                    && ((io.ehrelay.provider.EhrelayReplicator) listener).scheme().equals(scheme)) {
                bind(cacheName);
                if (state == State.STARTED) {
                    transport.cacheAdded(cacheName);
                }
                return;
            }
        }
    }

    /**
     * The caches this node replicates: bound ones, and those whose replicator of this scheme has not sent
     * anything yet (a cache is bound on its first event when no listener factory announced it).
     */
    private List<String> replicatedCaches() {
        java.util.Set<String> names = new java.util.LinkedHashSet<>(bindings.keySet());
        String[] all;
        try {
            all = cacheManager.getCacheNames();
        } catch (IllegalStateException e) {
            return new ArrayList<>(names);
        }
        for (String name : all) {
            Ehcache cache = cacheManager.getEhcache(name);
            if (cache == null || names.contains(name)) {
                continue;
            }
            for (Object listener : cache.getCacheEventNotificationService().getCacheEventListeners()) {
                if (listener instanceof io.ehrelay.provider.EhrelayReplicator
                        && ((io.ehrelay.provider.EhrelayReplicator) listener).scheme().equals(scheme)) {
                    names.add(name);
                    break;
                }
            }
        }
        return new ArrayList<>(names);
    }

    /** A cache of this CacheManager was removed: the transport stops serving it. */
    public void cacheRemoved(String cacheName) {
        if (state == State.STARTED) {
            transport.cacheRemoved(cacheName);
        }
    }

    /** Registers a peer by any spelling its transport understands (see {@link Transport#normalizePeer}). */
    public void registerPeer(String entry) {
        directory.register(transport.normalizePeer(entry));
    }

    public void unregisterPeer(String entry) {
        directory.unregister(transport.normalizePeer(entry));
    }

    /**
     * The application changed {@code key} ({@code null}: removed all) of a replicated cache: a resync of that cache
     * running now must not overwrite or remove it with the peer's older snapshot.
     */
    public void touchLocal(String cacheName, Object key) {
        ResyncTrack track = resyncing.isEmpty() ? null : resyncing.get(cacheName);
        if (track != null) {
            synchronized (track) {
                track.touchLocal(key);
            }
        }
    }

    /** Queues an encoded event for asynchronous replication; a refused event is counted and logged. */
    public void enqueue(CacheBinding binding, byte[] event) {
        offer(binding, new ReplicationQueue.Entry(binding.metrics, event, System.nanoTime()));
    }

    /**
     * Queues a put for asynchronous replication, to be encoded by the dispatcher straight into its batch when
     * key and value are fast-path types (no per-event array); otherwise encodes it now. Like Ehcache's own RMI
     * replication, the element's value is read when the batch is built.
     */
    public void enqueuePut(CacheBinding binding, Element element) throws IOException {
        int size = EventCodec.putSize(binding.nameUtf8, element);
        if (size < 0) {
            enqueue(binding, EventCodec.encodePut(binding.cacheName, element));
        } else {
            offer(binding, new ReplicationQueue.Entry(binding.metrics, binding.nameUtf8, element, size,
                    System.nanoTime()));
        }
    }

    private void offer(CacheBinding binding, ReplicationQueue.Entry entry) {
        CacheMetrics m = binding.metrics;
        m.queueAdd(entry.size);
        boolean accepted;
        try {
            accepted = state == State.STARTED && queue.offer(binding.lane, entry);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            accepted = false;
        }
        if (accepted) {
            m.onEnqueued();
            return;
        }
        m.queueRemove(entry.size);
        m.onDropped();
        if (state == State.STARTED) {
            // the peers miss this event: the batch of the lane's next event tells them to resynchronise from
            // this node (the queue marks it)
            for (Peer p : directory.peers()) {
                owes.add(p.endpoint());
            }
        }
        if (state != State.STARTED) {
            warn.warn("notstarted", "ehrelay: replication of CacheManager {} is not running; event for cache {} "
                    + "dropped (counted in dropped)", cacheManager.getName(), binding.cacheName);
        } else {
            warn.warn("overflow", "ehrelay: replication queue of CacheManager {} is full (queueMaxEvents={}, "
                    + "queueMaxBytes={}, overflowPolicy={}); event for cache {} dropped (counted in dropped). "
                    + "Raise the bounds, or check the peers' health.", cacheManager.getName(),
                    config.queueMaxEvents(), config.queueMaxBytes(), config.overflowPolicy(), binding.cacheName);
        }
    }

    /**
     * Sends one event to every peer and waits until each applied it, up to the replicator's timeout. Failures
     * are counted; with {@link SyncFailurePolicy#THROW} they are thrown as a {@link CacheException} naming
     * each peer and its reason.
     */
    public void replicateSynchronously(CacheBinding binding, byte[] event, ReplicatorConfig rc) {
        List<Peer> targets = peers();
        if (targets.isEmpty() || state != State.STARTED) {
            return;
        }
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(rc.syncTimeoutMillis());
        Batch batch = new Batch(EventCodec.singletonBatch(event), 1).withDeadline(deadline);
        List<CompletableFuture<Void>> futures = new ArrayList<>(targets.size());
        for (Peer p : targets) {
            try {
                futures.add(transport.send(p, batch, true));
            } catch (RuntimeException e) {
                futures.add(Futures.failed(e));
            }
        }
        List<String> failures = new ArrayList<>(0);
        CacheMetrics m = binding.metrics;
        for (int i = 0; i < targets.size(); i++) {
            Throwable failure;
            try {
                long left = Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
                failure = Dispatcher.await(futures.get(i), left == 0 ? 1 : left);
                if (failure == null && System.nanoTime() - deadline > 0) {
                    // sent on this thread by a transport that cannot bound the call: acknowledged, but late
                    failure = new java.util.concurrent.TimeoutException("acknowledged after "
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = e;
            }
            if (failure == null) {
                m.onSent(event.length, System.nanoTime() - t0);
                metrics.markBytesSent(batch.length());
            } else {
                m.onFailed();
                failures.add(targets.get(i) + " (" + Dispatcher.describe(failure) + ")");
            }
        }
        m.onSyncRoundTrip(System.nanoTime() - t0);
        if (!failures.isEmpty()) {
            String message = "ehrelay: synchronous replication for cache " + binding.cacheName + " of CacheManager "
                    + cacheManager.getName() + " not acknowledged within syncTimeoutMillis=" + rc.syncTimeoutMillis()
                    + " by " + failures;
            if (rc.syncFailurePolicy() == SyncFailurePolicy.THROW) {
                throw new CacheException(message);
            }
            warn.warn("sync:" + binding.cacheName, message);
        }
    }

    // ---- receiving -------------------------------------------------------------------------------------------

    private CodecLimits limits() {
        return config.limits();
    }

    @Override
    public void onEvents(String fromPeer, java.nio.ByteBuffer batch) throws MalformedFrameException {
        metrics.markBytesReceived(batch.remaining());
        EventCodec.DecodedBatch decoded;
        try {
            decoded = EventCodec.decodeBatch(batch, limits());
        } catch (MalformedFrameException e) {
            metrics.markMalformedFrame();
            warn.warn("malformed:" + fromPeer, "ehrelay: rejected a damaged batch from {} (counted in malformedFrames): {}",
                    fromPeer, e.getMessage());
            throw e;
        }
        countRejections(fromPeer, decoded);
        long stream = decoded.stream();
        Long previous = null;
        if (stream != 0) {
            previous = lastSeq.get(stream);
            if (previous != null && decoded.seq() <= previous) {
                // a batch sent again (a retry after a reset whose first attempt had arrived): applying it again
                // could undo later events
                metrics.meter("duplicateBatches").mark();
                warn.warn("duplicate:" + fromPeer, "ehrelay: batch {} of {} arrived again (the last applied is {}); "
                        + "skipped (counted in duplicateBatches)", decoded.seq(), fromPeer, previous);
                return;
            }
            if (lastSeq.size() > 100_000) {
                lastSeq.clear(); // streams of peers' past runs; a cleared one restarts as a first batch
            }
            lastSeq.put(stream, decoded.seq());
        }
        for (ReplicationEvent ev : decoded.events()) {
            apply(fromPeer, ev, stream, decoded.seq());
        }
        if (stream != 0) {
            long missed = previous == null ? 0 : decoded.seq() - previous - 1;
            boolean lost = (decoded.flags() & EventCodec.FLAG_LOST) != 0;
            if (missed > 0 || lost) {
                behind(fromPeer, missed, lost);
            }
        }
    }

    /**
     * This node missed events of {@code fromPeer}: batches that never arrived ({@code missedBatches}) or events
     * the peer itself lost ({@code peerLost}). The policy: this node resynchronises from the peer (its elements
     * replace this node's), unless both sides missed each other's events (a partition healed with writes on both
     * sides): then the node whose endpoint sorts first is the reference, the other one resynchronises from it, and
     * the events the other one wrote meanwhile (already counted in its {@code failed}) are superseded.
     */
    private void behind(String fromPeer, long missedBatches, boolean peerLost) {
        if (state != State.STARTED) {
            return;
        }
        String peer = transport.normalizePeer(transport.peerOf(fromPeer));
        metrics.meter("gaps").mark();
        boolean mutual = owes.remove(peer);
        if (!mutual && !owes.isEmpty() && directory.peers().stream().noneMatch(p -> p.endpoint().equals(peer))) {
            // this node reaches the peer under another name (a proxy, NAT): whether it owes that peer cannot be
            // told apart, so any debt counts
            mutual = true;
            owes.clear();
        }
        if (mutual && transport.localEndpoint().compareTo(peer) < 0) {
            LOG.warn("ehrelay: CacheManager {} and {} both missed each other's events ({} batches from it missed{}); "
                    + "this node is the reference: {} resynchronises from it", cacheManager.getName(), peer,
                    missedBatches, peerLost ? ", it lost events" : "", peer);
            dispatcher.markLostAll();
            return;
        }
        LOG.warn("ehrelay: CacheManager {} missed events of {} ({} batches missed{}{}); resynchronising from it",
                cacheManager.getName(), peer, missedBatches, peerLost ? ", it lost events" : "",
                mutual ? ", and it missed this node's: it is the reference" : "");
        resyncFrom(peer);
    }

    private void countRejections(String fromPeer, EventCodec.DecodedBatch decoded) {
        for (EventCodec.Rejection r : decoded.rejections()) {
            Ehcache cache = r.cacheName() == null ? null : resolve(r.cacheName());
            if (cache != null) {
                metrics.cache(r.cacheName()).onRejected();
            } else {
                metrics.markRejected();
            }
            warn.warn("rejected:" + r.reason().className(),
                    "ehrelay: rejected a replicated value from {} for cache {} (counted in rejected): {}", fromPeer,
                    r.cacheName(), r.reason().getMessage());
        }
    }

    /** @param stream the batch's stream and number (0: unsequenced), which tell a resync how new the event is */
    private void apply(String fromPeer, ReplicationEvent ev, long stream, long seq) {
        Ehcache cache = resolve(ev.cacheName());
        if (cache == null) {
            metrics.markUnknownCache();
            warn.warn("unknown:" + ev.cacheName(), "ehrelay: event from {} for cache '{}', which CacheManager {} "
                    + "does not have; dropped (counted in unknownCache)", fromPeer, ev.cacheName(),
                    cacheManager.getName());
            return;
        }
        CacheMetrics m = metrics.cache(ev.cacheName());
        m.onReceived();
        m.servedByCurrentThread();
        ResyncTrack track = resyncing.isEmpty() ? null : resyncing.get(ev.cacheName());
        if (track != null) {
            synchronized (track) { // a live event and the snapshot's element for the same key never interleave
                track.touch(ev, stream, seq);
                applyNow(fromPeer, cache, m, ev);
            }
            return;
        }
        applyNow(fromPeer, cache, m, ev);
    }

    private void applyNow(String fromPeer, Ehcache cache, CacheMetrics m, ReplicationEvent ev) {
        long t0 = System.nanoTime();
        try {
            switch (ev.op()) {
                case PUT:
                    cache.put(ev.toElement(), true);
                    break;
                case INVALIDATE:
                case REMOVE:
                    cache.remove(ev.key(), true);
                    break;
                case REMOVE_ALL:
                    cache.removeAll(true);
                    break;
                default:
                    throw new IllegalStateException("unhandled " + ev.op());
            }
        } catch (RuntimeException e) {
            m.onDropped();
            warn.warn("apply:" + ev.cacheName(), "ehrelay: could not apply {} from {} (counted in dropped): {}", ev,
                    fromPeer, e.toString());
            return;
        }
        m.onApplied(System.nanoTime() - t0);
    }

    /** A live cache of this CacheManager, including one still bootstrapping during CacheManager start-up. */
    private Ehcache resolve(String name) {
        Ehcache cache;
        try {
            cache = cacheManager.getEhcache(name);
        } catch (IllegalStateException e) {
            return null;
        }
        if (cache != null) {
            if (!initializing.isEmpty()) {
                initializing.remove(name);
            }
            return cache.getStatus() == Status.STATUS_ALIVE ? cache : null;
        }
        cache = initializing.get(name);
        return cache != null && cache.getStatus() == Status.STATUS_ALIVE ? cache : null;
    }

    @Override
    public void onStateRequest(String cacheName, int maxChunkBytes, ChunkSink sink) throws Exception {
        StateCursor cursor = openState(cacheName);
        for (byte[] chunk = cursor.next(maxChunkBytes); chunk != null; chunk = cursor.next(maxChunkBytes)) {
            sink.accept(chunk);
        }
    }

    @Override
    public StateCursor openState(String cacheName) {
        Ehcache cache = resolve(cacheName);
        if (cache == null) {
            throw new IllegalArgumentException("CacheManager " + cacheManager.getName() + " has no live cache named '"
                    + cacheName + "'");
        }
        CacheMetrics m = metrics.cache(cacheName);
        // the mark: this cache's stream and its last batch number before the keys are listed
        CacheBinding binding = bindings.get(cacheName);
        Dispatcher d = dispatcher;
        long markStream = binding == null || d == null ? 0 : d.stream(binding.lane);
        long markSeq = markStream == 0 ? 0 : d.lastSeq(binding.lane);
        java.util.Iterator<?> keys = new ArrayList<Object>(cache.getKeys()).iterator();
        return maxChunkBytes -> {
            m.servedByCurrentThread();
            List<byte[]> parts = new ArrayList<>();
            int size = 0;
            while (keys.hasNext() && size < maxChunkBytes) {
                Object key = keys.next();
                Element e = cache.getQuiet(key);
                if (e == null || e.isExpired()) {
                    continue;
                }
                byte[] ev;
                try {
                    ev = EventCodec.encodePut(cacheName, e);
                } catch (IOException | RuntimeException ex) {
                    warn.warn("bootstrap-encode:" + cacheName, "ehrelay: element {} of cache {} cannot be encoded "
                            + "for bootstrap and is skipped: {}", key, cacheName, ex.toString());
                    continue;
                }
                parts.add(ev);
                size += ev.length;
            }
            return parts.isEmpty() ? null : EventCodec.snapshotBatch(parts, size, markStream, markSeq);
        };
    }

    @Override
    public void onEvent(String fromPeer, ReplicationEvent event) {
        apply(fromPeer, event, 0, 0);
    }

    @Override
    public Ehcache liveCache(String cacheName) {
        return resolve(cacheName);
    }

    // ---- bootstrap -------------------------------------------------------------------------------------------

    /**
     * Loads {@code cache} from one peer, trying the next when one fails; asynchronously on the node's single
     * bootstrap thread when configured so (that thread ends when idle, so it does not add a thread per cache).
     */
    public void bootstrap(Ehcache cache, BootstrapConfig bc, long clusterFormMillis) {
        initializing.put(cache.getName(), cache);
        if (!bc.asynchronous()) {
            load(cache, bc, clusterFormMillis);
            return;
        }
        onBootstrapThread(() -> load(cache, bc, clusterFormMillis));
    }

    /** Runs {@code task} on the node's single bootstrap thread (created on demand, ends when idle). */
    private synchronized void onBootstrapThread(Runnable task) {
        if (state == State.STOPPED) {
            return;
        }
        if (bootstrapExecutor == null) {
            bootstrapExecutor = new ThreadPoolExecutor(1, 1, 5, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                    threads.factory("bootstrap"));
            bootstrapExecutor.allowCoreThreadTimeOut(true);
        }
        bootstrapExecutor.execute(task);
    }

    /**
     * Makes every replicated cache of this node equal to {@code peerEndpoint}'s: its elements replace this
     * node's, and elements it does not hold are removed, except where live events changed a key meanwhile (those
     * are newer than the snapshot). Used after missed events (see {@link #behind}) and after a partition healed.
     * Asynchronous, on the bootstrap thread, at most one queued per peer; counted in {@code resyncs} (and
     * {@code resyncFailures}), logged.
     */
    public void resyncFrom(String peerEndpoint) {
        if (!resyncPending.add(peerEndpoint)) {
            return;
        }
        onBootstrapThread(() -> {
            resyncPending.remove(peerEndpoint);
            Peer peer = new Peer(peerEndpoint);
            List<String> failed = new ArrayList<>();
            long total = 0;
            long removed = 0;
            for (String name : replicatedCaches()) {
                Ehcache cache = resolve(name);
                if (cache == null) {
                    continue;
                }
                AtomicLong loaded = new AtomicLong();
                ResyncTrack track = new ResyncTrack();
                resyncing.put(name, track);
                Throwable failure;
                try {
                    failure = fetchState(peer, cache, metrics.cache(name), 1 << 20, 600_000, track, loaded);
                    if (failure == null) {
                        removed += track.removeOthers(cache);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } finally {
                    resyncing.remove(name, track);
                }
                if (failure != null) {
                    failed.add(name + " (" + Dispatcher.describe(failure) + ")");
                }
                total += loaded.get();
            }
            if (failed.isEmpty()) {
                metrics.meter("resyncs").mark();
                LOG.info("ehrelay: CacheManager {} resynchronised from {}: {} elements loaded, {} it did not hold "
                        + "removed", cacheManager.getName(), peerEndpoint, total, removed);
            } else {
                metrics.meter("resyncFailures").mark();
                LOG.warn("ehrelay: CacheManager {} could not resynchronise from {}: {}", cacheManager.getName(),
                        peerEndpoint, failed);
            }
        });
    }

    /**
     * One cache's resync: the keys the snapshot held, and the keys live events changed while it ran. A live
     * event is newer than the snapshot when it comes in a batch of the snapshot's stream numbered after the
     * snapshot's mark, or from anyone else; older ones (in flight when the snapshot was taken) do not protect
     * their key. Guarded by its own monitor.
     */
    private static final class ResyncTrack {
        private final java.util.Set<Object> seen = new java.util.HashSet<>();
        /** Key → {stream, seq} of the last live event that changed it. */
        private final Map<Object, long[]> touched = new java.util.HashMap<>();
        /** A live removeAll: {stream, seq}, or null. */
        private long[] cleared;
        private long markStream;
        private long markSeq;
        /** A live event is applied (caller holds the monitor). */
        void touch(ReplicationEvent ev, long stream, long seq) {
            if (ev.op() == io.ehrelay.codec.Op.REMOVE_ALL) {
                cleared = new long[] {stream, seq};
            } else {
                touched.put(ev.key(), new long[] {stream, seq});
            }
        }

        /** A local write (caller holds the monitor): newer than any snapshot. */
        void touchLocal(Object key) {
            if (key == null) {
                cleared = new long[] {0, 0};
            } else {
                touched.put(key, new long[] {0, 0});
            }
        }

        private boolean newer(long[] event) {
            return event != null && (event[0] == 0 || event[0] != markStream || event[1] > markSeq);
        }

        /** Applies the snapshot's element unless a newer live event or a local write changed it meanwhile. */
        synchronized void offer(Ehcache cache, Element e, long stream, long seq) {
            markStream = stream;
            markSeq = seq;
            seen.add(e.getObjectKey());
            if (newer(cleared) || newer(touched.get(e.getObjectKey()))) {
                return;
            }
            cache.put(e, true);
        }

        /** Removes what the peer did not hold and nothing newer wrote; returns how many. */
        long removeOthers(Ehcache cache) {
            long n = 0;
            for (Object key : new ArrayList<Object>(cache.getKeys())) {
                synchronized (this) {
                    if (seen.contains(key) || newer(cleared) || newer(touched.get(key))) {
                        continue;
                    }
                    cache.remove(key, true);
                    n++;
                }
            }
            return n;
        }
    }

    private void load(Ehcache cache, BootstrapConfig bc, long clusterFormMillis) {
        String name = cache.getName();
        CacheMetrics m = metrics.cache(name);
        long t0 = System.nanoTime();
        long waitUntil = t0 + TimeUnit.MILLISECONDS.toNanos(clusterFormMillis);
        while (peers().isEmpty() && System.nanoTime() < waitUntil && state != State.STOPPED) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        List<Peer> candidates = new ArrayList<>(peers());
        if (candidates.isEmpty()) {
            LOG.info("ehrelay: no peers to bootstrap cache {} of CacheManager {} from", name, cacheManager.getName());
            return;
        }
        Collections.shuffle(candidates);
        List<String> failures = new ArrayList<>();
        for (Peer peer : candidates) {
            AtomicLong loaded = new AtomicLong();
            Throwable failure;
            try {
                failure = fetchState(peer, cache, m, bc.maximumChunkSizeBytes(), bc.timeoutMillis(), null, loaded);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (failure == null) {
                long nanos = System.nanoTime() - t0;
                m.onBootstrap(nanos);
                LOG.info("ehrelay: bootstrapped cache {} of CacheManager {} with {} elements from {} in {} ms", name,
                        cacheManager.getName(), loaded.get(), peer, TimeUnit.NANOSECONDS.toMillis(nanos));
                return;
            }
            failures.add(peer + " (" + Dispatcher.describe(failure) + ")");
            LOG.warn("ehrelay: bootstrap of cache {} from {} failed: {}; trying the next peer", name, peer,
                    Dispatcher.describe(failure));
        }
        m.onBootstrapFailure();
        LOG.warn("ehrelay: could not bootstrap cache {} of CacheManager {} from any peer: {}", name,
                cacheManager.getName(), failures);
    }

    /**
     * Asks {@code peer} for {@code cache}'s content and applies it, counting the elements in {@code loaded}.
     *
     * @param resync a resync's track (the peer's elements replace this node's), or {@code null} for a bootstrap
     *               (live elements stay)
     * @return why it failed, or {@code null}
     */
    private Throwable fetchState(Peer peer, Ehcache cache, CacheMetrics m, int maxChunkBytes, long timeoutMillis,
                                 ResyncTrack resync, AtomicLong loaded) throws InterruptedException {
        CompletableFuture<Void> f;
        try {
            f = transport.requestState(peer, cache.getName(), maxChunkBytes,
                    chunk -> loaded.addAndGet(applyChunk(peer.endpoint(), cache, m, chunk, resync)));
        } catch (RuntimeException e) {
            f = Futures.failed(e);
        }
        return Dispatcher.await(f, timeoutMillis);
    }

    /** @param resync a resync's track: the peer's element replaces this node's; {@code null}: a bootstrap */
    private int applyChunk(String fromPeer, Ehcache cache, CacheMetrics m, byte[] chunk, ResyncTrack resync)
            throws MalformedFrameException {
        EventCodec.DecodedBatch decoded;
        try {
            decoded = EventCodec.decodeBatch(chunk, 0, chunk.length, limits());
        } catch (MalformedFrameException e) {
            metrics.markMalformedFrame();
            throw e;
        }
        countRejections(fromPeer, decoded);
        m.servedByCurrentThread();
        int n = 0;
        for (ReplicationEvent ev : decoded.events()) {
            if (ev.op() != io.ehrelay.codec.Op.PUT || !ev.cacheName().equals(cache.getName())) {
                throw new MalformedFrameException("bootstrap chunk holds " + ev + ", not a put for " + cache.getName());
            }
            if (resync != null) {
                resync.offer(cache, ev.toElement(), decoded.stream(), decoded.seq());
            } else {
                // an element replicated live while bootstrapping is newer than the snapshot's: keep it
                cache.putIfAbsent(ev.toElement(), true);
            }
            n++;
        }
        return n;
    }

    /** What the transport sees of the node. */
    private final class Context implements TransportContext {
        @Override
        public InboundHandler inbound() {
            return ReplicationNode.this;
        }

        @Override
        public ThreadFactory threads(String role) {
            return threads.factory(role);
        }

        @Override
        public CodecLimits limits() {
            return config.limits();
        }

        @Override
        public ListenerConfig listener() {
            return listener;
        }

        @Override
        public ReplicationMetrics metrics() {
            return metrics;
        }

        @Override
        public String cacheManagerName() {
            return cacheManager.getName();
        }

        @Override
        public void setMembers(java.util.Collection<String> endpoints) {
            directory.replaceMembers(endpoints);
        }

        @Override
        public void resyncFrom(String peerEndpoint) {
            ReplicationNode.this.resyncFrom(peerEndpoint);
        }
    }

    /** A cache's handle on the node: its metrics and its queue lane. Immutable. */
    public static final class CacheBinding {
        final String cacheName;
        final byte[] nameUtf8;
        final CacheMetrics metrics;
        final int lane;

        CacheBinding(String cacheName, CacheMetrics metrics, int lane) {
            this.cacheName = cacheName;
            this.nameUtf8 = cacheName.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            this.metrics = metrics;
            this.lane = lane;
        }

        public String cacheName() {
            return cacheName;
        }

        public CacheMetrics metrics() {
            return metrics;
        }
    }
}
