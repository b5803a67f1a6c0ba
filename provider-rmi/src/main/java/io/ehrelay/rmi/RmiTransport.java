package io.ehrelay.rmi;

import java.net.InetAddress;
import java.rmi.NoSuchObjectException;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.RMIClientSocketFactory;
import java.rmi.server.UnicastRemoteObject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;

import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.AllowList;
import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.SerializationGuard;
import io.ehrelay.internal.rpc.RpcService;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.internal.rpc.RpcTransport;
import io.ehrelay.spi.HeartbeatFormat;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.LocalCachePeer;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.PeerGate;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.spi.TransportMetrics;
import net.sf.ehcache.distribution.ConfigurableRMIClientSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Java RMI as an ehrelay transport. Listening: an RMI registry on {@code hostName:port} (bound to that address
 * only) holding one relay object and one stock-compatible {@code CachePeer} per replicated cache, all exported on
 * {@code remoteObjectPort} with a serialization filter ({@link FilteredExport}): the relay admits short byte
 * arrays (names, sessions) and {@link RelayBatch}es (bounded by the node's {@code inboundBufferMaxBytes}), the
 * cache peers the allow-list plus Ehcache's message types. All its listening sockets together hold at most
 * {@code maxInboundConnections} connections ({@link InboundConnections}), each with a handshake deadline and an
 * idle timeout. Sending: one {@link RmiPeerChannel} per peer. Thread-safe.
 */
final class RmiTransport extends RpcTransport<RmiPeerChannel> {

    private static final Logger LOG = LoggerFactory.getLogger(RmiTransport.class);
    private static final String HOSTNAME_PROPERTY = "java.rmi.server.hostname";
    /** The longest array the relay's filter admits: sessions, challenges and proofs are far shorter. */
    private static final int RELAY_MAX_ARRAY = 4096;
    private final RmiSettings settings;
    private final Map<String, Remote> exported = new ConcurrentHashMap<>();
    private TransportContext context;
    private SSLContext tls;
    private Registry registry;
    private RegistryGuard guard;
    private BoundServerSocketFactory objectSockets;
    private BoundServerSocketFactory registrySockets;
    /** The connections peers hold open to this node, on all its listening sockets together. */
    private InboundConnections connections;
    private RMIClientSocketFactory stubSockets;
    private RMIClientSocketFactory lookupSockets;
    private RelayEndpoint relay;
    private RpcService relayService;
    private Object relayFilter;
    private int remoteObjectPort;
    private String localEndpoint;
    /** The relay's sessions when the node has a cluster secret. */
    private RpcSessions sessions;
    /** Which hosts the stock cache peers serve, when the listening sockets do not check it themselves. */
    private PeerGate stockCallGate;

    private final CodecLimits limits;

    /** @param limits the node's decoder limits: the filters of both remote objects and the stock event decoder */
    RmiTransport(RmiSettings settings, CodecLimits limits) {
        this.settings = settings;
        this.limits = limits;
    }

    @Override
    public synchronized void start(TransportContext ctx) throws Exception {
        this.context = ctx;
        startChannels(ctx);
        if (settings.tls) {
            tls = RmiTls.build(settings);
        }
        lookupSockets = settings.tls ? new TlsClientSocketFactory(settings.callTimeoutMillis)
                : new TimeoutClientSocketFactory(settings.callTimeoutMillis);
        ListenerConfig listener = ctx.listener();
        if (listener == null) {
            return;
        }
        RmiListenerSettings ls = listener.transportSettings(RmiListenerSettings.class);
        if (ls == null) {
            ls = new RmiListenerSettings(0, RmiListenerSettings.DEFAULT_SOCKET_TIMEOUT_MILLIS);
        }
        // stubs name the host peers reach this node at (advertisedHostName, else hostName); sockets bind hostName
        boolean advised = adviseHostName(listener.advertisedHostName());
        InetAddress address = InetAddress.getByName(listener.hostName());
        // a TLS client certificate authenticates the peer; with a cluster secret the relay checks each call's
        // session and the stock cache peers each caller's host; else hosts are admitted by unauthenticatedPeers
        boolean tlsAuthenticates = settings.tls && settings.clientAuth;
        sessions = RpcSessions.of(ctx);
        PeerGate gate = tlsAuthenticates || sessions != null ? null : ctx.peerGate();
        stockCallGate = !tlsAuthenticates && sessions != null ? ctx.peerGate() : null;
        // one bound for all the node's listening sockets: registry, relay and cache peers
        connections = new InboundConnections(ls.maxInboundConnections,
                ctx.metrics().count(MetricNames.REFUSED_CONNECTIONS), ctx.cacheManagerName(), // registered now: seen at 0
                ctx.clock());
        ctx.metrics().gauge(MetricNames.CONNECTIONS_IN, connections::size);
        // every call is walked with the node's decoding limits before the JDK reads it: the stock CachePeer calls
        // (stock nodes, hosts in unauthenticatedPeers) hold ehrelay's bounds (maxHashWork included)
        RateLimitedLog refusedLog = new RateLimitedLog(LOG,
                10_000, ctx.clock());
        CheckedCalls.Factory checks = (in, from) -> new CheckedCalls(in, limits, why -> {
            ctx.metrics().markRejected();
            refusedLog.warn("call:" + from.getHostAddress(), "ehrelay: refused an RMI connection from {} to "
                    + "CacheManager {} before the JDK read its call (counted in rejected): {}", from.getHostAddress(),
                    ctx.cacheManagerName(), why);
        }, from.getHostAddress());
        registrySockets = new BoundServerSocketFactory(address, tls, settings.clientAuth, gate, connections, checks);
        objectSockets = new BoundServerSocketFactory(address, tls, settings.clientAuth, gate, connections, checks);
        remoteObjectPort = ls.remoteObjectPort;
        // stock nodes know Ehcache's own client socket factory; with TLS only ehrelay nodes can take part anyway
        stubSockets = settings.tls ? new TlsClientSocketFactory(ls.socketTimeoutMillis)
                : new ConfigurableRMIClientSocketFactory(ls.socketTimeoutMillis);
        // the relay's arguments: short arrays (names, sessions, proofs) and RelayBatches, which read their bytes
        // themselves once the caller's session and the node's budget allowed them (no large array is ever read)
        InboundBudget budget = new InboundBudget(settings.inboundBufferMaxBytes, ctx.clock());
        ctx.metrics().gauge(MetricNames.INBOUND_BUFFER_BYTES, budget::used);
        RelayBatch.Receiver batches = new RelayBatch.Receiver(sessions, budget, limits.maxFrameBytes(),
                this::rejected, ctx.clock());
        relayFilter = SerializationGuard.remoteCallFilter(new CodecLimits(limits.maxFrameBytes(), 2,
                RELAY_MAX_ARRAY, 16, AllowList.of(Collections.emptyList())),
                Collections.singletonList(RelayBatch.class.getName()),
                (className, why) -> rejected(why), batches::admitted);
        RegistryGuard.install();
        try {
            registry = LocateRegistry.createRegistry(listener.port(), settings.tls ? stubSockets : null,
                    registrySockets);
        } catch (RemoteException e) {
            forgetHostName(advised, listener.advertisedHostName());
            throw BoundServerSocketFactory.CannotListen.in(e);
        }
        TransportMetrics.Count unauthorized = ctx.metrics().count(MetricNames.UNAUTHORIZED);
        guard = new RegistryGuard(registry, unauthorized::mark);
        try {
            int port = registrySockets.lastPort();
            localEndpoint = RmiUrls.endpoint(listener.advertisedHostName(), listener.advertisedPort(port));
            // a post waits for room at most half the callers' read timeout, so they hear why it failed
            relayService = new RpcService(ctx.inbound(), limits.maxFrameBytes(),
                    ctx.threads("apply"), ls.socketTimeoutMillis / 2, this::peerSaidHello, ctx.clock());
            relay = new RelayEndpoint(relayService, sessions);
            // the relay's stubs go to ehrelay nodes only: they may carry our own (buffered) client sockets, on a
            // listening socket of their own unless remoteObjectPort pins every object to one port
            RMIClientSocketFactory relaySockets = settings.tls || remoteObjectPort != 0 ? stubSockets
                    : new TimeoutClientSocketFactory(ls.socketTimeoutMillis);
            export(RelayRemote.BINDING, relay, relayFilter, relaySockets);
            if (gate == null || address.isLoopbackAddress()) {
                // (a probe from a host the gate refuses would be counted as unauthorized: skipped then)
                guard.probe(LocateRegistry.getRegistry(listener.hostName(), port, lookupSockets));
            }
            every(500, guard::repair);
        } catch (Exception e) {
            unexportAll();
            forgetHostName(advised, listener.advertisedHostName());
            throw BoundServerSocketFactory.CannotListen.in(e);
        }
    }

    @Override
    public String peerAuthentication() {
        boolean tls = settings != null && settings.tls && settings.clientAuth;
        boolean secret = context != null && context.clusterSecret() != null;
        if (tls && secret) {
            return "TLS client certificates (tlsClientAuth=true) and the cluster secret (clusterSecret)";
        }
        return tls ? "TLS client certificates (tlsClientAuth=true)"
                : secret ? "the cluster secret (clusterSecret); stock RMI callers only from unauthenticatedPeers" : null;
    }

    @Override
    public boolean provesClusterSecret() {
        return true;
    }

    /**
     * Stubs carry the host of {@code java.rmi.server.hostname}; stock nodes use it to call back.
     *
     * @return whether this set it
     */
    private static boolean adviseHostName(String hostName) {
        String current = System.getProperty(HOSTNAME_PROPERTY);
        if (current == null) {
            System.setProperty(HOSTNAME_PROPERTY, hostName);
            return true;
        } else if (!current.equals(hostName)) {
            LOG.warn("ehrelay: {}={} but the RMI listener's hostName is {}; stubs exported by this JVM name {}, "
                    + "so peers must reach this node there", HOSTNAME_PROPERTY, current, hostName, current);
        }
        return false;
    }

    /**
     * Takes back {@code java.rmi.server.hostname} when this node set it and then could not listen: a JVM-wide setting
     * naming an address the node never served from would mislead every later export (a corrected configuration
     * started in the same JVM, say).
     */
    private static void forgetHostName(boolean advised, String hostName) {
        if (advised && hostName.equals(System.getProperty(HOSTNAME_PROPERTY))) {
            System.clearProperty(HOSTNAME_PROPERTY);
        }
    }

    private void rejected(String why) {
        context.metrics().markRejected();
        LOG.warn("ehrelay: rejected a remote call to CacheManager {} (counted in rejected): {}",
                context.cacheManagerName(), why);
    }

    private Remote export(String name, Remote object, Object filter, RMIClientSocketFactory csf)
            throws RemoteException {
        Remote stub = FilteredExport.export(object, remoteObjectPort, csf, objectSockets, filter);
        exported.put(name, object);
        guard.bind(name, stub);
        return stub;
    }

    @Override
    public String localEndpoint() {
        return localEndpoint;
    }

    /** RMI marshals each batch into an {@code ObjectOutputStream}, which then takes the batch's own array. */
    @Override
    public boolean encodesOnHeap() {
        return true;
    }

    /** Ehcache's own heartbeat, listing the caches bound for stock peers: stock nodes find this one and back. */
    @Override
    public HeartbeatFormat heartbeatFormat() {
        return new StockHeartbeatFormat(() -> {
            List<String> names = new ArrayList<>(exported.keySet());
            names.remove(RelayRemote.BINDING);
            Collections.sort(names);
            return names;
        });
    }

    @Override
    public String normalizePeer(String configured) {
        return RmiUrls.endpoint(configured);
    }

    @Override
    public String listeningOn() {
        BoundServerSocketFactory r = registrySockets;
        BoundServerSocketFactory o = objectSockets;
        if (r == null || context == null || context.listener() == null) {
            return null;
        }
        String host = context.listener().hostName();
        Set<Integer> objects = new TreeSet<>(o.ports());
        return RmiUrls.endpoint(host, r.lastPort()) + " (RMI registry), " + (remoteObjectPort != 0
                ? RmiUrls.endpoint(host, remoteObjectPort) + " (remote objects: the relay and the stock cache peers)"
                : "ports " + objects + " (remote objects, each on a free port: set remoteObjectPort to fix one)");
    }

    @Override
    public String endpointAt(String host, int port) {
        return RmiUrls.endpoint(host, port);
    }

    @Override
    public int localPort() {
        return localEndpoint == null ? -1 : RmiUrls.port(localEndpoint);
    }

    @Override
    public synchronized void cacheAdded(String cacheName) {
        if (registry == null || stopped() || exported.containsKey(cacheName)) {
            return;
        }
        if (RelayRemote.BINDING.equals(cacheName)) {
            LOG.warn("ehrelay: cache '{}' has the name of the relay binding; stock RMI peers cannot reach it",
                    cacheName);
            return;
        }
        try {
            // a filter per cache: a call from a host the gate refuses is refused before anything of it is read
            // (no decoding, no effect); an admitted caller's call that the filter refuses cannot be decoded, so this
            // node invalidates that cache
            LocalCachePeer peer = new LocalCachePeer(cacheName, LocalCachePeer.urlBase(localEndpoint),
                    context.inbound(), stockCallGate);
            Object filter = SerializationGuard.remoteCallFilter(limits, LocalCachePeer.ENVELOPE,
                    (className, why) -> context.inbound().onUndecodable(LocalCachePeer.caller(), cacheName,
                            className, why), peer::callerRefusal);
            export(cacheName, peer, filter, stubSockets);
        } catch (RemoteException e) {
            LOG.warn("ehrelay: could not bind cache {} for stock RMI peers: {}", cacheName, e.toString());
        }
    }

    @Override
    public synchronized void cacheRemoved(String cacheName) {
        Remote object = exported.remove(cacheName);
        if (object != null) {
            unbind(cacheName, object);
        }
    }

    private void unbind(String name, Remote object) {
        guard.unbind(name);
        try {
            UnicastRemoteObject.unexportObject(object, true);
        } catch (NoSuchObjectException e) {
            // already gone
        }
    }

    /** A peer that crashed while idle is found by a probe: no membership of RMI's or HTTP's tells. */
    @Override
    protected boolean probesIdlePeers() {
        return true;
    }

    @Override
    protected RmiPeerChannel newChannel(String endpoint) {
        return new RmiPeerChannel(endpoint, localEndpoint, lookupSockets, settings, limits,
                context.threads("sender"), context.clock(), context.clusterSecret(),
                context.clusterSecret() == null ? null : context.peerGate());
    }

    /** The ports this node listens on (registry, relay, cache peers), for tests. */
    synchronized List<Integer> listeningPorts() {
        List<Integer> ports = new ArrayList<>();
        for (BoundServerSocketFactory f : new BoundServerSocketFactory[] {registrySockets, objectSockets}) {
            if (f != null) {
                ports.addAll(f.ports());
            }
        }
        return ports;
    }

    /** The connections peers hold open to this node now (also the gauge {@code connectionsIn}). */
    int inboundConnections() {
        InboundConnections c = connections;
        return c == null ? 0 : c.size();
    }

    /** A peer whose registry holds caches and no relay: a stock node, which anti-entropy leaves out. */
    @Override
    public boolean isStockNode(Peer peer) {
        RmiPeerChannel c = channels().get(peer.endpoint());
        return c != null && c.kind() == RmiPeerChannel.Kind.STOCK;
    }

    /** What each peer turned out to be (for diagnostics and tests): endpoint to kind. */
    Map<String, RmiPeerChannel.Kind> peerKinds() {
        Map<String, RmiPeerChannel.Kind> out = new TreeMap<>();
        channels().forEach((e, l) -> out.put(e, l.kind()));
        return out;
    }

    @Override
    public void stop() {
        if (!markStopped()) {
            return;
        }
        synchronized (this) {
            unexportAll();
        }
        if (relayService != null) {
            relayService.close(2000);
        }
        stopChannels(2000);
    }

    private void unexportAll() {
        for (Map.Entry<String, Remote> e : new ArrayList<>(exported.entrySet())) {
            unbind(e.getKey(), e.getValue());
        }
        exported.clear();
        if (registry != null) {
            try {
                UnicastRemoteObject.unexportObject(registry, true);
            } catch (NoSuchObjectException e) {
                // already gone
            }
        }
        for (BoundServerSocketFactory f : new BoundServerSocketFactory[] {registrySockets, objectSockets}) {
            if (f != null) {
                f.closeAll();
            }
        }
    }
}
