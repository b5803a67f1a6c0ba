package io.ehrelay.tcp;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.GeneralSecurityException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import javax.net.ssl.SSLContext;

import io.ehrelay.internal.Futures;
import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.InboundSlots;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import io.ehrelay.spi.TransportContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replication over TCP: length-prefixed {@link Frames} on blocking {@code java.nio} socket
 * channels with {@code TCP_NODELAY}. One outbound connection per peer carries this node's batches (gathering
 * writes) and brings back acknowledgements and state chunks; each peer's own connection to this node carries
 * its batches the other way. Threads: one acceptor, one thread per inbound connection (at most
 * {@code maxInboundConnections}), and per peer one writer plus one reader while connected — O(peers), never
 * O(caches). With {@code tls=true} every connection runs TLS ({@link TlsChannel}) before its frames; with
 * {@code tlsClientAuth=true} a peer's certificate authenticates it. Thread-safe.
 */
final class TcpTransport implements Transport {

    private static final Logger LOG = LoggerFactory.getLogger(TcpTransport.class);

    private final TcpSettings settings;
    private final Map<Peer, TcpPeerChannel> outbound = new ConcurrentHashMap<>();
    private final Set<Thread> inboundThreads = ConcurrentHashMap.newKeySet();
    private volatile TransportContext context;
    private volatile ServerSocketChannel server;
    private volatile String endpoint;
    private volatile InboundSlots<InboundConnection> inbound;
    private volatile InboundBudget budget;
    /** The context of TLS connections, or {@code null} without TLS. */
    private volatile SSLContext tls;
    /**
     * A connection that stops sending in the middle of a frame for this long is closed (its buffer freed); tests
     * shorten it.
     */
    static volatile long stallMillis = 30_000;
    /** When every inbound slot is taken, a connection that has been silent this long gives its slot up. */
    static final long EVICT_IDLE_MILLIS = 60_000;
    private volatile boolean stopped;
    private Thread acceptor;

    TcpTransport(TcpSettings settings) {
        this.settings = settings;
    }

    @Override
    public void start(TransportContext ctx) throws IOException {
        this.context = ctx;
        if (settings.tls) {
            try {
                tls = settings.stores.context();
            } catch (GeneralSecurityException | IOException e) {
                throw new IOException("cannot use the TLS stores " + settings.stores + ": " + e, e);
            }
        }
        ListenerConfig listener = ctx.listener();
        if (listener == null) {
            LOG.info("ehrelay: CacheManager {} has no tcp peer listener: it sends to its peers but receives nothing",
                    ctx.cacheManagerName());
            return;
        }
        ServerSocketChannel ssc = ServerSocketChannel.open();
        if (settings.socketBufferBytes > 0) {
            // accepted sockets inherit the listener's receive buffer, which must be set before bind for > 64 KiB
            ssc.socket().setReceiveBufferSize(settings.socketBufferBytes);
        }
        try {
            ssc.bind(new InetSocketAddress(listener.hostName(), listener.port()), 128);
        } catch (IOException e) {
            ssc.close();
            throw new IOException("cannot listen on " + listener.hostName() + ":" + listener.port() + ": " + e, e);
        }
        server = ssc;
        endpoint = Endpoints.format(listener.advertisedHostName(),
                listener.advertisedPort(((InetSocketAddress) ssc.getLocalAddress()).getPort()));
        // refusedConnections registered now: monitoring sees it at 0
        inbound = new InboundSlots<>("TCP", settings.maxInboundConnections, EVICT_IDLE_MILLIS,
                ctx.metrics().count(MetricNames.REFUSED_CONNECTIONS), ctx.cacheManagerName(), ctx.clock());
        ctx.metrics().gauge(MetricNames.CONNECTIONS_IN, inbound::size);
        ctx.metrics().gauge("connectionsOut", () -> outbound.values().stream().filter(TcpPeerChannel::isConnected).count());
        budget = new InboundBudget(settings.inboundBufferMaxBytes, context.clock());
        ctx.metrics().gauge(MetricNames.INBOUND_BUFFER_BYTES, () -> budget.used());
        acceptor = ctx.threads("tcp-accept").newThread(this::acceptLoop);
        acceptor.start();
    }

    private void acceptLoop() {
        try {
            server.socket().setSoTimeout(1000); // the loop also watches the open connections, once a second
        } catch (IOException e) {
            LOG.debug("accept timeout: {}", e.toString());
        }
        while (!stopped) {
            SocketChannel sc;
            try {
                Socket socket = server.socket().accept();
                sc = socket.getChannel();
            } catch (SocketTimeoutException e) {
                inbound.closeStalled(stallMillis);
                continue;
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (stopped || !server.isOpen()) {
                    return;
                }
                if (!stopped) {
                    LOG.warn("ehrelay: accept on {} failed: {}", endpoint, e.toString());
                }
                continue;
            }
            // with a cluster secret every peer proves it (the connection's handshake), with tlsClientAuth its
            // certificate; otherwise only hosts unauthenticatedPeers admits are served
            if (!peersAuthenticate() && !admitted(sc)) {
                closeQuietly(sc);
                continue;
            }
            inbound.closeStalled(stallMillis);
            TlsChannel secured = null;
            try {
                if (tls != null) {
                    secured = TlsChannel.server(sc, tls, settings.clientAuth, context.clock());
                }
                InboundConnection[] holder = new InboundConnection[1];
                InboundConnection c = new InboundConnection(sc, secured, context, () -> inbound.closed(holder[0]),
                        this::peerIsUp, budget, stallMillis + 5000);
                holder[0] = c;
                if (!inbound.admit(c)) {
                    c.close();
                    continue;
                }
                Thread t = context.threads("tcp-in").newThread(() -> {
                    try {
                        c.run();
                    } finally {
                        inboundThreads.remove(Thread.currentThread());
                    }
                });
                inboundThreads.add(t);
                t.start();
            } catch (IOException e) {
                if (secured != null) {
                    try {
                        secured.close();
                    } catch (IOException closing) {
                        // closing anyway
                    }
                }
                closeQuietly(sc);
            }
        }
    }

    /** Whether every accepted connection authenticates its peer: the host gate is then not needed. */
    private boolean peersAuthenticate() {
        return context.clusterSecret() != null || settings.tls && settings.clientAuth;
    }

    private boolean admitted(SocketChannel sc) {
        SocketAddress remote;
        try {
            remote = sc.getRemoteAddress();
        } catch (IOException e) {
            return false;
        }
        return remote instanceof InetSocketAddress
                && context.peerGate().admits(((InetSocketAddress) remote).getAddress(), "connection");
    }

    private static void closeQuietly(SocketChannel sc) {
        try {
            sc.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    @Override
    public boolean provesClusterSecret() {
        return true;
    }

    @Override
    public String peerAuthentication() {
        String certificates = settings.tls && settings.clientAuth ? "TLS client certificates (tlsClientAuth=true)"
                : null;
        String secret = context.clusterSecret() == null ? null
                : "clusterSecret, proven by every connection with a challenge and a response";
        if (certificates != null && secret != null) {
            return certificates + " and " + secret;
        }
        return certificates != null ? certificates : secret;
    }

    /** A manual or registered peer must be {@code host:port}; it is kept as written. */
    @Override
    public String normalizePeer(String configured) {
        Endpoints.parse(configured);
        return configured;
    }

    @Override
    public String localEndpoint() {
        return endpoint;
    }

    @Override
    public String listeningOn() {
        try {
            ServerSocketChannel s = server;
            return s == null ? null : Endpoints.format(((InetSocketAddress) s.getLocalAddress()).getHostString(),
                    ((InetSocketAddress) s.getLocalAddress()).getPort()) + " (TCP: peers' connections)";
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public String endpointAt(String host, int port) {
        return Endpoints.format(host, port);
    }

    @Override
    public int localPort() {
        return endpoint == null ? -1 : Endpoints.parse(endpoint).getPort();
    }

    /** Inbound connections name their sender {@code "host:port (remote address)"}: the part before the space. */
    @Override
    public String peerOf(String fromPeer) {
        int space = fromPeer.indexOf(" (");
        return space < 0 ? fromPeer : fromPeer.substring(0, space);
    }

    private TcpPeerChannel connection(Peer peer) {
        TcpPeerChannel c = outbound.get(peer);
        if (c != null) {
            return c;
        }
        return outbound.computeIfAbsent(peer, p -> new TcpPeerChannel(p, settings, context, endpoint,
                context.clock(), tls));
    }

    @Override
    public CompletableFuture<Void> send(Peer peer, Batch batch, boolean acknowledge) {
        if (stopped) {
            return Futures.failed(new ConnectException("transport stopped"));
        }
        try {
            return connection(peer).send(batch, acknowledge);
        } catch (IllegalArgumentException e) {
            return Futures.failed(e);
        }
    }

    @Override
    public CompletableFuture<Void> requestState(Peer peer, String cacheName, int maxChunkBytes,
                                                InboundHandler.ChunkSink sink) {
        if (stopped) {
            return Futures.failed(new ConnectException("transport stopped"));
        }
        try {
            return connection(peer).requestState(cacheName, maxChunkBytes, sink);
        } catch (IllegalArgumentException e) {
            return Futures.failed(e);
        }
    }

    /** A peer connected to us, so it is up: our connection to it need not wait out its backoff. */
    private void peerIsUp(String endpoint) {
        for (TcpPeerChannel c : outbound.values()) {
            if (!c.isConnected() && c.goesTo(endpoint)) {
                c.retryNow();
            }
        }
    }

    /** Connects ahead to every current peer; closes the connections of peers that left. */
    @Override
    public void peersChanged(List<Peer> peers) {
        if (stopped) {
            return;
        }
        for (Peer p : peers) {
            try {
                connection(p).connectAhead();
            } catch (IllegalArgumentException e) {
                LOG.warn("ehrelay: peer '{}' is not host:port; ignored", p);
            }
        }
        for (Peer known : outbound.keySet()) {
            if (!peers.contains(known)) {
                TcpPeerChannel gone = outbound.remove(known);
                if (gone != null) {
                    gone.close();
                }
            }
        }
    }

    @Override
    public boolean isReachable(Peer peer) {
        TcpPeerChannel c = outbound.get(peer);
        return c != null && c.isConnected();
    }

    @Override
    public boolean isReachableWithin(Peer peer, long millis) throws InterruptedException {
        TcpPeerChannel c = outbound.get(peer);
        return c != null && c.isConnectedWithin(millis);
    }

    @Override
    public void stop() {
        stopped = true;
        if (server != null) {
            try {
                server.close();
            } catch (IOException e) {
                LOG.debug("closing server: {}", e.toString());
            }
        }
        if (acceptor != null) {
            join(acceptor);
        }
        outbound.values().forEach(TcpPeerChannel::close);
        outbound.clear();
        if (inbound != null) {
            inbound.closeAll();
        }
        inboundThreads.forEach(TcpTransport::join);
    }

    private static void join(Thread t) {
        try {
            t.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
