package io.ehrelay.internal.engine;

import java.util.List;
import java.util.function.BooleanSupplier;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.discovery.PeerDirectory;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pieces every cache of a node's CacheManager shares, built in the order they need each other, and the node's
 * gauges over them. Wiring only: {@link ReplicationNode} runs the lifecycle; what each piece does is in
 * docs/architecture.md. The dispatcher comes last, once the transport has started ({@link #startDispatcher}).
 */
final class Engine {

    private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

    final ReplicationQueue queue;
    final Convergence convergence;
    final SentClasses sentClasses;
    final Membership membership;
    final Ordering ordering;
    final Outbound outbound;
    final Inbound inbound;
    final StateTransfer stateTransfer;
    final AntiEntropy antiEntropy;
    final PeerStats peerStats;

    private final NodeConfig config;
    private final Transport transport;
    private final PeerDirectory directory;
    private final ReplicationMetrics metrics;
    private final NodeThreads threads;
    private final RateLimitedLog warn;
    private final Clock clock;
    private final String cacheManager;
    private volatile Dispatcher dispatcher;

    /**
     * @param alive   whether the node runs (events are sent and applied only then)
     * @param stopped whether the node stopped (a bootstrap under way gives up)
     */
    Engine(String cm, String transportName, NodeConfig config, Transport transport, CacheBindings caches,
           PeerDirectory directory, ReplicationMetrics metrics, NodeThreads threads, RateLimitedLog warn, Clock clock,
           BooleanSupplier alive, BooleanSupplier stopped) {
        this.config = config;
        this.transport = transport;
        this.directory = directory;
        this.metrics = metrics;
        this.threads = threads;
        this.warn = warn;
        this.clock = clock;
        this.cacheManager = cm;
        queue = new ReplicationQueue(config.dispatcherThreads(), config.queueMaxBytes(), config.queueMaxEvents(),
                config.overflowPolicy(), config.overflowBlockMillis(), clock);
        caches.setLanes(config.dispatcherThreads());
        membership = new Membership(cm, transport, caches::liveReplicatedCaches, clock);
        sentClasses = new SentClasses(config.limits().allowList(), config.learnAllowedClasses());
        ordering = new Ordering(clock, config.tombstoneRetentionMillis(), warn);
        Invalidations invalidations = new Invalidations(metrics, config.limits().allowList(), warn);
        stateTransfer = new StateTransfer(cm, caches, transport, metrics, config.limits(), directory::peers,
                () -> dispatcher, invalidations, stopped, threads.factory("bootstrap"), warn, clock, ordering,
                membership);
        convergence = new Convergence(cm, transport, directory::peers, metrics, caches, alive,
                () -> dispatcher.markLostAll(), membership, stateTransfer);
        outbound = new Outbound(cm, config, queue, this::peersHolding, transport, metrics, alive, convergence, warn,
                clock, sentClasses, ordering);
        antiEntropy = new AntiEntropy(cm, config, transport, caches, this::peersHolding, stateTransfer, ordering,
                metrics, clock, alive, warn);
        metrics.addOperations(ObjectNames.convergence(cm, transportName), antiEntropy, ConvergenceMBean.class);
        peerStats = new PeerStats(metrics, clock, queue::oldestEnqueuedNanos, antiEntropy);
        inbound = new Inbound(cm, caches, metrics, config.limits(), convergence, warn, clock, ordering, membership,
                this::endpointOf, invalidations, stateTransfer, new AntiEntropyServer(cm, caches, warn), peerStats);
        metrics.gauge("queueCapacityBytes", config::queueMaxBytes);
        metrics.gauge("queueCapacityEvents", config::queueMaxEvents);
        metrics.gauge("queueHighWaterBytes", queue::highWaterBytes);
        metrics.gauge("queueHighWaterEvents", queue::highWaterEvents);
        metrics.gauge("peersKnown", () -> directory.peers().size());
        metrics.gauge("peersReachable", this::reachablePeers);
        metrics.gauge("threads", threads::live);
        metrics.gauge(MetricNames.TOMBSTONES, () -> caches.all().stream().mapToLong(b -> b.versions.tombstones()).sum());
        metrics.gauge(MetricNames.VERSIONS, () -> caches.all().stream().mapToLong(b -> b.versions.size()).sum());
        metrics.meter(MetricNames.UNAUTHORIZED);
        if (sentClasses.learning()) {
            metrics.gauge("learnedAllowedClasses", sentClasses::learnedSetting);
        }
    }

    /** Once the transport runs: the directory's changes reach it, and the dispatcher starts sending. */
    void startDispatcher() {
        directory.onChange(peers -> {
            transport.peersChanged(peers);
            membership.peersChanged(peers);
            peerStats.peersChanged(peers);
        });
        Dispatcher d = new Dispatcher(queue, config, directory::peers, transport, metrics,
                threads.factory("dispatcher"), warn, convergence::owe, clock, membership, antiEntropy::tick,
                peerStats);
        dispatcher = d;
        d.start();
    }

    /** Tells the peers this node leaves, then drains the queue up to {@code drainMillis} and stops sending. */
    void stopSending(long drainMillis) {
        try {
            membership.leaving(ReplicationNode.LEAVING_MILLIS); // peers stop listing it now, not when a send fails
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.debug("ehrelay: CacheManager {}: telling peers it stops failed", cacheManager, e);
        }
        Dispatcher d = dispatcher;
        if (d != null) {
            d.stop(drainMillis);
        }
    }

    /** Once the transport stopped: bootstraps end, and {@code learnAllowedClasses} says what it learned. */
    void stopped() {
        stateTransfer.stop();
        if (sentClasses.learning()) {
            String learned = sentClasses.learnedSetting();
            LOG.info("ehrelay: learnAllowedClasses: CacheManager {} sent {}", cacheManager,
                    learned.isEmpty() ? "only classes the JDK defaults admit" : "classes that need: " + learned);
        }
    }

    /** The dispatcher, or {@code null} before {@link #startDispatcher}. */
    Dispatcher dispatcher() {
        return dispatcher;
    }

    /** The peers that hold {@code cacheName}: where its events go (see {@link Membership#holding}). */
    private List<Peer> peersHolding(String cacheName) {
        return membership.holding(directory.peers(), cacheName);
    }

    /** The endpoint of the node a transport's {@code fromPeer} names, or {@code null}. */
    private String endpointOf(String fromPeer) {
        try {
            return transport.normalizePeer(transport.peerOf(fromPeer));
        } catch (RuntimeException e) {
            return null;
        }
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
}
