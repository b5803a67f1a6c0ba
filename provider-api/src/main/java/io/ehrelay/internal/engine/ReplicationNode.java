package io.ehrelay.internal.engine;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import io.ehrelay.internal.config.BootstrapConfig;
import io.ehrelay.internal.config.DiscoveryConfig;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.ReplicatorConfig;
import io.ehrelay.internal.config.UnauthenticatedPeers;
import io.ehrelay.internal.discovery.DnsDiscovery;
import io.ehrelay.internal.discovery.MulticastHeartbeat;
import io.ehrelay.internal.discovery.PeerDirectory;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.PeerGate;
import io.ehrelay.spi.Transport;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.spi.TransportMetrics;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.Status;
import net.sf.ehcache.event.CacheEventListener;
import net.sf.ehcache.event.CacheManagerEventListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replication node of one CacheManager and one transport: it wires the pieces every cache of that
 * CacheManager shares and runs their lifecycle. The pieces, each with one job:
 * <ul>
 *   <li>{@link CacheBindings}: which caches replicate here, their metrics and queue lanes;</li>
 *   <li>{@link Outbound}: encodes a cache change, queues it or sends it synchronously;</li>
 *   <li>{@link ReplicationQueue} and {@link Dispatcher}: the bounded queue and the threads that batch it to
 *       every peer (through {@link SendRound});</li>
 *   <li>{@link Inbound}: decodes and applies what arrives, with a {@link StreamSequencer};</li>
 *   <li>{@link Convergence}: who resyncs from whom after missed events;</li>
 *   <li>{@link StateTransfer}: serving, bootstrapping and resyncing a cache's content;</li>
 *   <li>{@link PeerDirectory} and {@link MulticastHeartbeat}: who the peers are; the {@link Transport}: bytes.</li>
 * </ul>
 *
 * <p>Lifecycle, as Ehcache 2.x drives it. Start-up: the peer provider and listener factories
 * {@link #obtain} the node and {@link #configure} / {@link #setListener} it; the provider's {@code init()} calls
 * {@link #start()}; caches (and their replicators and bootstrap loaders) are created after that, and a listener
 * factory may run after {@code init()} as well. Shutdown ({@code CacheManager.shutdown()} in Ehcache 2.5 to
 * 2.10.9.2): the peer <em>providers</em> are disposed first — {@link #stop()} runs then, while every cache is
 * still alive — then the CacheManager's event listeners (the peer listener, whose {@code dispose()} calls
 * {@link #stop()} again, a no-op), and the caches last. {@code stop()} drains the queue up to
 * {@code shutdownDrainMillis}, stops the transport and discovery, waits for every ehrelay thread and unregisters
 * the MBeans; events the caches report after it (a cache's own disposal does not replicate) are counted as
 * dropped. A CacheManager whose constructor fails after the node started (a cache's factory class misspelt, a bad
 * property of a cache's replicator) is never shut down, so Ehcache never disposes the node: the node sees that
 * itself and stops (see {@link #watchConstruction()}). Thread-safe.
 */
public final class ReplicationNode {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationNode.class);

    /** How long a stopping node waits for its peers to take its leaving (at most, for all of them). */
    static final long LEAVING_MILLIS = 1000;

    private final CacheManager cacheManager;
    private final String scheme;
    private final String transportName;
    private final Clock clock;
    private final NodeThreads threads;
    private final ReplicationMetrics metrics;
    private final RateLimitedLog warn;
    private final CacheBindings caches;
    private volatile State state = State.NEW;
    /** Counted down once {@link #shutdown} finished: threads ended, transport stopped, port released. */
    private final CountDownLatch down = new CountDownLatch(1);
    /** The thread waiting for the CacheManager's constructor to end (see {@link #watchConstruction()}), or null. */
    private volatile Thread constructionWatch;
    private NodeConfig config;
    private Transport transport;
    private ListenerConfig listener;
    private PeerDirectory directory;
    private ReplicationQueue queue;
    private volatile Dispatcher dispatcher;
    private MulticastHeartbeat heartbeat;
    private DnsDiscovery dns;
    private Convergence convergence;
    private Outbound outbound;
    private Ordering ordering;
    private AntiEntropy antiEntropy;
    private PeerStats peerStats;
    private SentClasses sentClasses;
    private Inbound inbound;
    private StateTransfer stateTransfer;
    private Membership membership;
    private final CacheManagerEventListener cacheWatch = new CacheWatch();
    private final PeerGate gate = new PeerGate() {
        @Override
        public boolean admits(InetAddress address, String what) {
            return ReplicationNode.this.admits(address, what);
        }

        @Override
        public boolean admitsOtherHosts() {
            return config.unauthenticatedPeers().admitsOtherHosts();
        }
    };

    private final AtomicBoolean warnedRegister = new AtomicBoolean();

    private ReplicationNode(CacheManager cacheManager, String scheme, String transportName,
                            Predicate<CacheEventListener> isReplicator, Clock clock) {
        this.cacheManager = cacheManager;
        this.scheme = scheme;
        this.transportName = transportName;
        this.clock = clock;
        this.threads = new NodeThreads(transportName, cacheManager.getName(), clock);
        this.metrics = new ReplicationMetrics(cacheManager.getName(), transportName);
        this.warn = new RateLimitedLog(LOG, 10_000, clock);
        this.caches = new CacheBindings(cacheManager, metrics, isReplicator);
    }

    /** Node states. */
    private enum State { NEW, STARTED, STOPPED }

    /**
     * The node of {@code cacheManager} for {@code scheme}, created (unconfigured) if there is none yet.
     *
     * @param isReplicator tells this scheme's replicators among a cache's listeners
     */
    public static ReplicationNode obtain(CacheManager cacheManager, String scheme, String transportName,
                                         Predicate<CacheEventListener> isReplicator) {
        return NodeRegistry.obtain(cacheManager, scheme,
                s -> new ReplicationNode(cacheManager, s, transportName, isReplicator, Clock.SYSTEM));
    }

    /** The node of {@code cacheManager} for {@code scheme}, or {@code null}. */
    public static ReplicationNode find(CacheManager cacheManager, String scheme) {
        return NodeRegistry.find(cacheManager, scheme);
    }

    /** Every node of {@code cacheManager} (one per ehrelay transport it configures). */
    public static List<ReplicationNode> all(CacheManager cacheManager) {
        return NodeRegistry.all(cacheManager);
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
        String cm = cacheManager.getName();
        directory = new PeerDirectory(manual, d.peerTimeoutMillis());
        queue = new ReplicationQueue(nodeConfig.dispatcherThreads(), nodeConfig.queueMaxBytes(),
                nodeConfig.queueMaxEvents(), nodeConfig.overflowPolicy(), nodeConfig.overflowBlockMillis(), clock);
        caches.setLanes(nodeConfig.dispatcherThreads());
        convergence = new Convergence(cm, nodeTransport, this::peers, metrics, caches, this::isAlive,
                () -> dispatcher.markLostAll());
        sentClasses = new SentClasses(nodeConfig.limits().allowList(), nodeConfig.learnAllowedClasses());
        membership = new Membership(cm, nodeTransport, caches::liveReplicatedCaches, clock);
        ordering = new Ordering(clock, nodeConfig.tombstoneRetentionMillis(), warn);
        outbound = new Outbound(cm, nodeConfig, queue, this::peersHolding, nodeTransport, metrics, this::isAlive,
                convergence, warn, clock, sentClasses, ordering);
        inbound = new Inbound(cm, caches, metrics, nodeConfig.limits(), convergence, warn, clock, ordering);
        stateTransfer = new StateTransfer(cm, caches, nodeTransport, metrics, nodeConfig.limits(), this::peers,
                () -> dispatcher, inbound, () -> state == State.STOPPED, threads.factory("bootstrap"), warn, clock,
                ordering);
        antiEntropy = new AntiEntropy(cm, nodeConfig, nodeTransport, caches, this::peersHolding, stateTransfer,
                ordering, metrics, clock, this::isAlive, warn);
        inbound.setAntiEntropy(antiEntropy);
        metrics.addOperations(ObjectNames.convergence(cm, transportName), antiEntropy,
                ConvergenceMBean.class);
        peerStats = new PeerStats(metrics, clock, queue::oldestEnqueuedNanos, antiEntropy);
        inbound.setPeerStats(peerStats);
        convergence.setStateTransfer(stateTransfer);
        convergence.setMembership(membership);
        inbound.setStateTransfer(stateTransfer);
        inbound.setMembership(membership, this::endpointOf);
        stateTransfer.setMembership(membership);
        metrics.gauge("queueCapacityBytes", nodeConfig::queueMaxBytes);
        metrics.gauge("queueCapacityEvents", nodeConfig::queueMaxEvents);
        metrics.gauge("queueHighWaterBytes", queue::highWaterBytes);
        metrics.gauge("queueHighWaterEvents", queue::highWaterEvents);
        metrics.gauge("peersKnown", () -> directory.peers().size());
        metrics.gauge("peersReachable", this::reachablePeers);
        metrics.gauge("threads", threads::live);
        metrics.gauge("tombstones", () -> caches.all().stream().mapToLong(b -> b.versions.tombstones()).sum());
        metrics.gauge("versions", () -> caches.all().stream().mapToLong(b -> b.versions.size()).sum());
        metrics.meter(MetricNames.UNAUTHORIZED);
        if (sentClasses.learning()) {
            metrics.gauge("learnedAllowedClasses", sentClasses::learnedSetting);
        }
    }

    /** Called by the listener factory: where this node listens. */
    public synchronized void setListener(ListenerConfig listenerConfig) {
        this.listener = listenerConfig;
    }

    /** Starts the transport, the dispatcher and discovery; called by the peer provider's {@code init()}. */
    public synchronized void start() {
        if (state != State.NEW) {
            return;
        }
        if (config == null) {
            throw new CacheException("ehrelay: CacheManager " + cacheManager.getName() + " has a " + scheme
                    + " peer listener but no " + scheme + " cacheManagerPeerProviderFactory");
        }
        // a CacheManager of this JVM that failed to construct may still hold the port (its node is being stopped)
        for (ReplicationNode other : NodeRegistry.nodes()) {
            if (other != this) {
                other.stopIfOrphaned(true);
            }
        }
        try {
            transport.start(new Context());
            directory.setSelf(transport.localEndpoint());
            directory.onChange(peers -> {
                transport.peersChanged(peers);
                membership.peersChanged(peers);
                peerStats.peersChanged(peers);
            });
            peerStats.peersChanged(directory.peers());
            dispatcher = new Dispatcher(queue, config, directory::peers, transport, metrics,
                    threads.factory("dispatcher"), warn, convergence::owe, clock, membership, antiEntropy::tick,
                    peerStats);
            dispatcher.start();
            if (config.discovery().mode() == DiscoveryConfig.Mode.AUTOMATIC) {
                heartbeat = new MulticastHeartbeat(config.discovery(), transportName, transport::localEndpoint,
                        directory, threads.factory("heartbeat"), metrics.meter(MetricNames.MALFORMED_HEARTBEATS),
                        transport.heartbeatFormat(), clock);
                heartbeat.start();
            }
            if (config.discovery().mode() == DiscoveryConfig.Mode.DNS) {
                DiscoveryConfig d = config.discovery();
                dns = new DnsDiscovery(d.dnsName(), d.dnsPort(), d.dnsIntervalMillis(),
                        DnsDiscovery.SYSTEM, directory, transport::endpointAt,
                        threads.factory("dns"), clock);
                dns.start(transport.localPort());
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
        // the node follows the CacheManager's caches itself, with or without a peer listener (JGroups has none)
        cacheManager.getCacheManagerEventListenerRegistry().registerListener(cacheWatch);
        for (String name : cacheManager.getCacheNames()) {
            bindIfReplicated(name);
        }
        LOG.info("ehrelay: {} replication of CacheManager {} started at {}", transportName, cacheManager.getName(),
                transport.localEndpoint());
        logAdmission(transport.localEndpoint());
        String listening = transport.listeningOn();
        if (listening != null) {
            LOG.info("ehrelay: {} replication of CacheManager {} listens on {}; peers are told {}", transportName,
                    cacheManager.getName(), listening, transport.localEndpoint());
        }
        watchConstruction();
    }

    /**
     * Ehcache starts the node in the middle of the CacheManager's constructor (the peer provider's {@code init()},
     * before the caches are created) and disposes it only in {@code CacheManager.shutdown()}. When the constructor
     * fails after the start — a cache's factory class misspelt, a bad property of a cache's replicator — Ehcache
     * forgets the CacheManager without shutting it down, and nothing would stop the node: its threads would run on
     * and its port stay bound, so that a retry in the same JVM could not listen there. The constructor runs under
     * the CacheManager's monitor ({@code CacheManager.init} is {@code synchronized}, Ehcache 2.6 to 2.10): one thread
     * waits for that monitor, then stops the node if the CacheManager is not among
     * {@code CacheManager.ALL_CACHE_MANAGERS} any more (which it joins before its peer providers start, and leaves
     * after they were disposed by a shutdown, or when its constructor failed). It ends as soon as the constructor
     * has; a node started outside a constructor starts none.
     */
    private void watchConstruction() {
        if (!Thread.holdsLock(cacheManager)) {
            return;
        }
        Thread watch = threads.factory("startup").newThread(() -> {
            boolean constructed;
            synchronized (cacheManager) {
                constructed = CacheManager.ALL_CACHE_MANAGERS.contains(cacheManager);
            }
            if (!constructed) {
                stopIfOrphaned(false);
            }
        });
        constructionWatch = watch;
        watch.start();
    }

    /**
     * Stops this node if its CacheManager is gone without having disposed it: its constructor failed after the
     * node started (see {@link #watchConstruction()}). With {@code await}, waits for such a node that another thread
     * is stopping too, so that its port is free on return.
     */
    void stopIfOrphaned(boolean await) {
        if (CacheManager.ALL_CACHE_MANAGERS.contains(cacheManager)) {
            return;
        }
        boolean mine;
        synchronized (this) {
            if (state == State.NEW) {
                return;
            }
            mine = state == State.STARTED;
            state = State.STOPPED;
        }
        if (mine) {
            LOG.warn("ehrelay: CacheManager {} failed to start after its {} replication had started at {}; Ehcache "
                    + "does not dispose a CacheManager it could not construct, so ehrelay stopped that replication "
                    + "itself: its threads ended and its port is released", cacheManager.getName(), transportName,
                    transport.localEndpoint());
            shutdown(0);
        } else if (await) {
            try {
                if (!down.await(10, TimeUnit.SECONDS)) {
                    LOG.warn("ehrelay: {} replication of CacheManager {}, which failed to start, is still stopping",
                            transportName, cacheManager.getName());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Stops the node (see the class comment for when Ehcache calls it); later calls do nothing. */
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
        try {
            stopEverything(drainMillis);
        } finally {
            down.countDown();
        }
    }

    private void stopEverything(long drainMillis) {
        try {
            cacheManager.getCacheManagerEventListenerRegistry().unregisterListener(cacheWatch);
        } catch (RuntimeException e) {
            LOG.debug("ehrelay: could not unregister from CacheManager {}", cacheManager.getName(), e);
        }
        if (membership != null && transport != null) {
            try {
                membership.leaving(LEAVING_MILLIS); // peers stop listing this node now, not when a send fails
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                LOG.debug("ehrelay: CacheManager {}: telling peers it stops failed", cacheManager.getName(), e);
            }
        }
        if (dispatcher != null) {
            dispatcher.stop(drainMillis);
        }
        if (dns != null) {
            dns.stop();
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
        if (stateTransfer != null) {
            stateTransfer.stop();
        }
        if (sentClasses != null && sentClasses.learning()) {
            String learned = sentClasses.learnedSetting();
            LOG.info("ehrelay: learnAllowedClasses: CacheManager {} sent {}", cacheManager.getName(),
                    learned.isEmpty() ? "only classes the JDK defaults admit" : "classes that need: " + learned);
        }
        // CacheManager.shutdown() holds the CacheManager's monitor, which a construction watch started just before
        // may still wait for: it ends by itself once it has the monitor and finds the node stopped
        Thread watch = constructionWatch;
        List<String> alive = threads.awaitTermination(5000,
                watch != null && Thread.holdsLock(cacheManager) ? watch : null);
        if (!alive.isEmpty()) {
            LOG.warn("ehrelay: threads still running after shutdown of CacheManager {}: {}", cacheManager.getName(),
                    alive);
        }
        metrics.close();
        NodeRegistry.forget(cacheManager, scheme, this);
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

    /** The node's clock: what every time-dependent decision of the node and its transport reads. */
    public Clock clock() {
        return clock;
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

    public List<Peer> peers() {
        PeerDirectory d = directory;
        return d == null ? Collections.<Peer>emptyList() : d.peers();
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
    /** The caches this node replicates (bound, or with a replicator that has not sent yet). */
    public List<String> replicatedCaches() {
        return caches.replicatedCaches();
    }

    /** The node's receiving side (what transports call), or {@code null} before it is configured. */
    public InboundHandler inbound() {
        return inbound;
    }

    public Transport transport() {
        return transport;
    }

    // ---- what the provider layer calls -------------------------------------------------------------------------

    /** The cache's binding (its metrics and queue lane); the first call binds every replicated cache. */
    public CacheBinding bind(String cacheName) {
        return caches.bind(cacheName);
    }

    /** A cache was added: bound (and served by the transport) if it replicates through this node. */
    private void bindIfReplicated(String cacheName) {
        if (caches.isReplicated(cacheName)) {
            caches.bind(cacheName);
            if (state == State.STARTED) {
                transport.cacheAdded(cacheName);
                membership.localAdded();
            }
        }
    }

    /** A cache of this CacheManager was removed: the transport stops serving it, the peers stop sending it. */
    private void cacheRemoved(String cacheName) {
        if (state == State.STARTED) {
            transport.cacheRemoved(cacheName);
            membership.localRemoved();
        }
    }

    /** The caches this node replicates now (without removed ones), e.g. for {@code getBoundCachePeers}. */
    public List<String> liveReplicatedCaches() {
        return caches.liveReplicatedCaches();
    }

    /** Whether the peer at {@code endpoint} holds {@code cacheName}, as far as this node knows (see Membership). */
    public boolean peerHolds(String endpoint, String cacheName) {
        Membership m = membership;
        return m == null || m.has(endpoint, cacheName);
    }

    /** The peers that hold {@code cacheName}: where its events go (see {@link Membership#holding}). */
    private List<Peer> peersHolding(String cacheName) {
        return membership.holding(peers(), cacheName);
    }

    /** The endpoint of the node a transport's {@code fromPeer} names, or {@code null}. */
    private String endpointOf(String fromPeer) {
        try {
            return transport.normalizePeer(transport.peerOf(fromPeer));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The {@link io.ehrelay.spi.PeerGate} of this node's transport: {@code unauthenticatedPeers}, counted. */
    private boolean admits(InetAddress address, String what) {
        UnauthenticatedPeers u = config.unauthenticatedPeers();
        if (u.admits(address)) {
            return true;
        }
        metrics.meter(MetricNames.UNAUTHORIZED).mark();
        warn.warn("unauthorized:" + address.getHostAddress(), "ehrelay: refused an unauthenticated {} from {} to "
                + "{} replication of CacheManager {} (counted in unauthorized): unauthenticated peers are accepted "
                + "only from {}. To accept this host, add it to unauthenticatedPeers on cacheManagerPeerProviderFactory "
                + "(unauthenticatedPeers={}|{})", what, address.getHostAddress(), transportName, cacheManager.getName(),
                u.setting(), u.setting(), address.getHostAddress());
        return false;
    }

    /** Says at start whom this node accepts without authentication (see {@code unauthenticatedPeers}). */
    private void logAdmission(String endpoint) {
        UnauthenticatedPeers u = config.unauthenticatedPeers();
        if (endpoint == null) {
            return; // no listener: nothing accepts peers here
        }
        String auth = transport.peerAuthentication();
        if (auth != null && u.admitsNone()) {
            LOG.info("ehrelay: {} replication of CacheManager {} at {} accepts only peers that authenticate ({})",
                    transportName, cacheManager.getName(), endpoint, auth);
            return;
        }
        if (auth != null && !u.any()) {
            LOG.info("ehrelay: {} replication of CacheManager {} at {} accepts peers that authenticate ({}), and "
                    + "where the transport lets peers in without (e.g. stock RMI nodes) only from {} "
                    + "(unauthenticatedPeers)", transportName, cacheManager.getName(), endpoint, auth, u.setting());
            return;
        }
        if (u.any()) {
            LOG.warn("ehrelay: {} replication of CacheManager {} at {} accepts unauthenticated peers from any host "
                    + "(unauthenticatedPeers=any): any process that reaches that address can read, change and clear "
                    + "its replicated caches", transportName, cacheManager.getName(), endpoint);
        } else if (u.addresses().isEmpty()) {
            LOG.info("ehrelay: {} replication of CacheManager {} at {} accepts unauthenticated peers only from this "
                    + "host: other hosts are refused and counted in unauthorized. To accept them, list their "
                    + "addresses in unauthenticatedPeers (or unauthenticatedPeers=any) on cacheManagerPeerProviderFactory",
                    transportName, cacheManager.getName(), endpoint);
        } else {
            LOG.info("ehrelay: {} replication of CacheManager {} at {} accepts unauthenticated peers only from {}{}; "
                    + "other hosts are refused and counted in unauthorized (unauthenticatedPeers)", transportName,
                    cacheManager.getName(), endpoint, u.loopback() ? "this host and " : "", u.addresses());
        }
    }

    /** Follows the CacheManager's caches being added and removed. */
    private final class CacheWatch implements CacheManagerEventListener {
        @Override
        public void init() {
        }

        @Override
        public Status getStatus() {
            return status();
        }

        @Override
        public void dispose() {
        }

        @Override
        public void notifyCacheAdded(String cacheName) {
            if (isAlive()) {
                bindIfReplicated(cacheName);
            }
        }

        @Override
        public void notifyCacheRemoved(String cacheName) {
            cacheRemoved(cacheName);
        }
    }

    /**
     * Registers a peer by any spelling its transport understands (see {@link Transport#normalizePeer}); ignored,
     * with one WARN, by a transport that finds its members itself ({@link Transport#registersPeers()}).
     *
     * @throws CacheException naming the accepted formats when {@code entry} names no peer
     */
    public void registerPeer(String entry) {
        if (registersPeers("registerPeer", entry)) {
            directory.register(peerEntry(entry));
        }
    }

    public void unregisterPeer(String entry) {
        if (registersPeers("unregisterPeer", entry)) {
            directory.unregister(peerEntry(entry));
        }
    }

    private boolean registersPeers(String call, String entry) {
        if (transport == null) {
            throw new CacheException("ehrelay: CacheManager " + cacheManager.getName() + " has no " + scheme
                    + " peer provider configured");
        }
        if (transport.registersPeers()) {
            return true;
        }
        if (warnedRegister.compareAndSet(false, true)) {
            LOG.warn("ehrelay: {}({}) ignored: {} peers of CacheManager {} are the members the transport finds "
                    + "itself (configure its discovery instead); later calls are ignored without a word",
                    call, entry, transportName, cacheManager.getName());
        }
        return false;
    }

    private String peerEntry(String entry) {
        try {
            return transport.normalizePeer(entry);
        } catch (IllegalArgumentException e) {
            throw new CacheException("ehrelay: " + transportName + " cannot register peer '" + entry + "': "
                    + e.getMessage(), e);
        }
    }

    /** Replicates a put or update with its value (see {@link Outbound} for where it is encoded). */
    public void replicatePut(CacheBinding binding, Ehcache cache, Element element, ReplicatorConfig rc) {
        outbound.put(binding, cache, element, rc);
    }

    /**
     * Replicates a remove ({@link Op#REMOVE}) or an invalidation ({@link Op#INVALIDATE}) of {@code key}; for an
     * invalidation, {@code element} is the element put.
     */
    public void replicateKey(CacheBinding binding, Ehcache cache, Op op, Element element, Object key,
                             ReplicatorConfig rc) {
        outbound.keyEvent(binding, cache, op, element, key, rc);
    }

    public void replicateRemoveAll(CacheBinding binding, Ehcache cache, ReplicatorConfig rc) {
        outbound.removeAll(binding, cache, rc);
    }

    /** Loads {@code cache} from a peer (see {@link StateTransfer}). */
    public void bootstrap(Ehcache cache, BootstrapConfig bc, long clusterFormMillis) {
        stateTransfer.bootstrap(cache, bc, clusterFormMillis);
    }

    /** Reloads every replicated cache from {@code peerEndpoint} (see {@link Convergence}). */
    public void resyncFrom(String peerEndpoint) {
        convergence.resyncFrom(peerEndpoint);
    }

    /** What the transport sees of the node. */
    private final class Context implements TransportContext {
        @Override
        public InboundHandler inbound() {
            return inbound;
        }

        @Override
        public ThreadFactory threads(String role) {
            return threads.factory(role);
        }

        @Override
        public int maxFrameBytes() {
            return config.limits().maxFrameBytes();
        }

        @Override
        public ListenerConfig listener() {
            return listener;
        }

        @Override
        public TransportMetrics metrics() {
            return metrics;
        }

        @Override
        public String cacheManagerName() {
            return cacheManager.getName();
        }

        @Override
        public PeerGate peerGate() {
            return gate;
        }

        @Override
        public ClusterSecret clusterSecret() {
            return config.clusterSecret();
        }

        @Override
        public Clock clock() {
            return clock;
        }

        @Override
        public void setMembers(Collection<String> endpoints) {
            directory.replaceMembers(endpoints);
        }

        @Override
        public void resyncFrom(String peerEndpoint) {
            ReplicationNode.this.resyncFrom(peerEndpoint);
        }
    }
}
