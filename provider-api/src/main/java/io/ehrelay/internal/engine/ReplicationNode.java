package io.ehrelay.internal.engine;

import java.lang.management.ManagementFactory;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.discovery.PeerDirectory;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Status;
import net.sf.ehcache.event.CacheEventListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replication node of one CacheManager and one transport: configures, starts and stops what every cache of
 * that CacheManager shares — the {@link Engine} (queue, dispatcher, inbound and outbound, ordering, convergence,
 * state transfer), the {@link Transport}, {@link NodeDiscovery} (the {@link PeerDirectory}, multicast or DNS),
 * {@link Admission}, the {@link CacheWatch} and the MBeans. How Ehcache 2.x drives the lifecycle, and why a node
 * whose CacheManager failed to construct stops itself ({@link ConstructionWatch}): docs/architecture.md,
 * "Lifecycle". Thread-safe.
 */
public final class ReplicationNode {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicationNode.class);

    /**
     * How long a stopping node waits for its peers to take its leaving (at most, for all of them; it ends when
     * every peer answered or failed). A peer that does not take it in time keeps listing this node until a send
     * fails, and a synchronous put there fails with it: 1 s was too short for a TLS handshake on a loaded host.
     */
    static final long LEAVING_MILLIS = 3000;

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
    /** The thread waiting for the CacheManager's constructor to end (see {@link ConstructionWatch}), or null. */
    private volatile Thread constructionWatch;
    private volatile NodeConfig config;
    private volatile Transport transport;
    private volatile ListenerConfig listener;
    private volatile Engine engine;
    private Admission admission;
    private volatile NodeDiscovery discovery;
    private volatile Replication replication;
    private CacheWatch cacheWatch;

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
        String cm = cacheManager.getName();
        NodeDiscovery d = new NodeDiscovery(nodeConfig.discovery(), nodeTransport);
        discovery = d;
        PeerDirectory directory = d.directory;
        admission = new Admission(nodeConfig.unauthenticatedPeers(), metrics, warn, transportName, cm);
        engine = new Engine(cm, transportName, nodeConfig, nodeTransport, caches, directory, metrics, threads, warn,
                clock, this::isAlive, () -> state == State.STOPPED);
        replication = new Replication(engine, new PeerRegistrations(cm, transportName, nodeTransport, directory));
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
            transport.start(new NodeContext(this, threads, admission));
            discovery.directory.setSelf(transport.localEndpoint());
            engine.startDispatcher();
            discovery.start(transportName, threads, metrics, clock);
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
        cacheWatch = new CacheWatch(cacheManager, caches, transport, engine.membership, this::isAlive);
        cacheWatch.start();
        LOG.info("ehrelay: {} replication of CacheManager {} started at {}", transportName, cacheManager.getName(),
                transport.localEndpoint());
        admission.logAt(transport.localEndpoint(), transport.peerAuthentication());
        String listening = transport.listeningOn();
        if (listening != null) {
            LOG.info("ehrelay: {} replication of CacheManager {} listens on {}; peers are told {}", transportName,
                    cacheManager.getName(), listening, transport.localEndpoint());
        }
        constructionWatch = ConstructionWatch.start(cacheManager, threads.factory("startup"),
                () -> stopIfOrphaned(false));
    }

    /**
     * Stops this node if its CacheManager is gone without having disposed it: its constructor failed after the
     * node started (see {@link ConstructionWatch}). With {@code await}, waits for such a node that another thread
     * is stopping too, so that its port is free on return.
     */
    void stopIfOrphaned(boolean await) {
        if (!ConstructionWatch.orphaned(cacheManager)) {
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
        if (cacheWatch != null) {
            cacheWatch.stop();
        }
        Engine e = engine;
        if (e != null) {
            e.stopSending(drainMillis);
        }
        if (discovery != null) {
            discovery.stop();
        }
        if (transport != null) {
            try {
                transport.stop();
            } catch (RuntimeException re) {
                LOG.warn("ehrelay: stopping the {} transport failed", transportName, re);
            }
        }
        if (e != null) {
            e.stopped();
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

    public NodeConfig config() {
        return config;
    }

    public ListenerConfig listener() {
        return listener;
    }

    /** This node's endpoint, or {@code null} before start or without a listener. */
    public String localEndpoint() {
        Transport t = transport;
        return t == null || state == State.NEW ? null : t.localEndpoint();
    }

    public List<Peer> peers() {
        NodeDiscovery d = discovery;
        return d == null ? Collections.<Peer>emptyList() : d.directory.peers();
    }

    /** The caches this node replicates (bound, or with a replicator that has not sent yet). */
    public List<String> replicatedCaches() {
        return caches.replicatedCaches();
    }

    /** The node's receiving side (what transports call), or {@code null} before it is configured. */
    public InboundHandler inbound() {
        Engine e = engine;
        return e == null ? null : e.inbound;
    }

    public Transport transport() {
        return transport;
    }

    // ---- what the provider layer calls -------------------------------------------------------------------------

    /** The cache's binding (its metrics and queue lane); the first call binds every replicated cache. */
    public CacheBinding bind(String cacheName) {
        return caches.bind(cacheName);
    }

    /** The caches this node replicates now (without removed ones), e.g. for {@code getBoundCachePeers}. */
    public List<String> liveReplicatedCaches() {
        return caches.liveReplicatedCaches();
    }

    /**
     * What the provider layer asks of this node: replicate, bootstrap, resync, register peers.
     *
     * @throws CacheException when no peer provider configured the node
     */
    public Replication replication() {
        Replication r = replication;
        if (r == null) {
            throw new CacheException("ehrelay: CacheManager " + cacheManager.getName() + " has no " + scheme
                    + " peer provider configured");
        }
        return r;
    }

    /** The peers a transport that finds them itself reports (see {@code TransportContext.setPeers}). */
    void replacePeers(Collection<String> endpoints) {
        discovery.directory.replacePeers(endpoints);
    }
}
