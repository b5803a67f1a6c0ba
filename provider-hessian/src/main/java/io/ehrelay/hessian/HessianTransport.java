package io.ehrelay.hessian;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.rpc.RpcService;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.internal.rpc.RpcTransport;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hessian over HTTP(S) as an ehrelay transport: the JDK's built-in HTTP server on {@code hostName:port/path}
 * (HTTPS with a key store, requiring client certificates unless {@code tlsClientAuth=false}), served by
 * {@code httpThreads} threads (up to {@code maxHttpThreads} while requests arrive slowly; see
 * {@link RequestGuard}), and one {@link HessianPeerChannel} per peer. Thread-safe.
 */
final class HessianTransport extends RpcTransport<HessianPeerChannel> {

    static {
        // the JDK's HTTP server writes a response's headers and body separately: without TCP_NODELAY, Nagle's
        // algorithm meets the client's delayed ACK and every call waits ~40 ms. Read once, when the first
        // server of the JVM starts; an explicit setting wins.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(HessianTransport.class);
    private static final RateLimitedLog HANDSHAKES = new RateLimitedLog(LOG, 10_000);

    private final HessianSettings settings;
    private TransportContext context;
    private SSLContext clientTls;
    private HttpServer server;
    private RequestGuard requests;
    /** Whether callers prove themselves with TLS client certificates (HTTPS with {@code tlsClientAuth=true}). */
    private volatile boolean tlsAuthenticates;
    private RpcService relay;
    private String localEndpoint;

    HessianTransport(HessianSettings settings) {
        this.settings = settings;
    }

    @Override
    public synchronized void start(TransportContext ctx) throws Exception {
        this.context = ctx;
        startChannels(ctx);
        if (settings.tls.configured()) {
            clientTls = settings.tls.context();
        }
        ListenerConfig listener = ctx.listener();
        if (listener == null) {
            return;
        }
        HessianListenerSettings ls = listener.transportSettings(HessianListenerSettings.class);
        if (ls == null) {
            ls = HessianListenerSettings.defaults();
        }
        InetSocketAddress address = new InetSocketAddress(InetAddress.getByName(listener.hostName()),
                listener.port());
        try {
            if (ls.https()) {
                HttpsServer https = HttpsServer.create(address, 128);
                https.setHttpsConfigurator(configurator(ls, ctx));
                server = https;
            } else {
                server = HttpServer.create(address, 128);
            }
        } catch (BindException e) {
            // the JDK says only "Address already in use" or "Cannot assign requested address"
            throw new IOException("cannot listen on " + hostForUrl(listener.hostName()) + ":" + listener.port()
                    + ": " + e.getMessage(), e);
        }
        tlsAuthenticates = ls.tlsAuthenticates();
        relay = new RpcService(ctx.inbound(), ctx.maxFrameBytes(), ctx.threads("apply"),
                settings.callTimeoutMillis / 2, this::hello, ctx.clock());
        requests = new RequestGuard(ls.httpThreads, ls.maxHttpThreads, ls.requestReadMillis, ctx.threads("http"),
                ctx.clock(), ctx.metrics(), ctx.cacheManagerName());
        server.setExecutor(requests);
        InboundBudget budget = new InboundBudget(settings.inboundBufferMaxBytes, ctx.clock());
        ctx.metrics().gauge(MetricNames.INBOUND_BUFFER_BYTES, budget::used);
        // a TLS client certificate authenticates the caller: unauthenticatedPeers does not apply then
        server.createContext(ls.path, new RpcHttpHandler(relay, settings.clusterToken,
                ctx.maxFrameBytes() + 64 * 1024L, ctx.metrics(), tlsAuthenticates ? null : ctx.peerGate(),
                RpcSessions.of(ctx)).withBudget(budget));
        server.start();
        every(RequestGuard.TICK_MILLIS, requests::tick);
        int listening = server.getAddress().getPort();
        localEndpoint = PeerUrls.normalize((ls.https() ? "https" : "http") + "://"
                + hostForUrl(listener.advertisedHostName()) + ":" + listener.advertisedPort(listening) + ls.path);
    }

    /**
     * HTTPS with the listener's key; with {@code tlsClientAuth=true} every connection must present a client
     * certificate that {@code tlsTrustStore} trusts, and failed handshakes are counted in {@code unauthorized}.
     */
    private static HttpsConfigurator configurator(HessianListenerSettings ls, TransportContext ctx)
            throws Exception {
        SSLContext tls = ls.tls.context();
        boolean clientAuth = ls.clientAuth;
        if (clientAuth) {
            TransportMetrics.Count unauthorized = ctx.metrics().count(MetricNames.UNAUTHORIZED);
            String node = ctx.cacheManagerName();
            tls = HandshakeWatch.watch(tls, (peer, failure) -> {
                unauthorized.mark();
                HANDSHAKES.warn("tls:" + peer.substring(0, Math.max(0, peer.lastIndexOf(':'))),
                        "ehrelay: refused a TLS connection from {} to CacheManager {}: no trusted client certificate "
                                + "(tlsClientAuth=true): {} (counted in unauthorized)", peer, node, failure.getMessage());
            });
        }
        return new HttpsConfigurator(tls) {
            @Override
            public void configure(HttpsParameters params) {
                SSLParameters p = getSSLContext().getDefaultSSLParameters();
                p.setNeedClientAuth(clientAuth);
                params.setSSLParameters(p);
            }
        };
    }

    private static String hostForUrl(String host) {
        return host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
    }

    @Override
    public String localEndpoint() {
        return localEndpoint;
    }

    @Override
    public String peerAuthentication() {
        List<String> ways = new ArrayList<>();
        if (tlsAuthenticates) {
            ways.add("TLS client certificates (tlsClientAuth=true)");
        }
        if (context != null && context.clusterSecret() != null) {
            ways.add("the cluster secret (clusterSecret)");
        }
        if (settings != null && settings.clusterToken != null) {
            ways.add("the cluster token (clusterToken)");
        }
        if (ways.isEmpty()) {
            return null;
        }
        int last = ways.size() - 1;
        return last == 0 ? ways.get(0) : String.join(", ", ways.subList(0, last)) + " and " + ways.get(last);
    }

    @Override
    public boolean provesClusterSecret() {
        return true;
    }

    @Override
    public String normalizePeer(String configured) {
        return PeerUrls.normalize(configured);
    }

    @Override
    public String listeningOn() {
        HttpServer s = server;
        return s == null ? null : hostForUrl(s.getAddress().getHostString()) + ":" + s.getAddress().getPort()
                + " (" + (s instanceof HttpsServer ? "HTTPS" : "HTTP") + ": peers' calls)";
    }

    /** The peer's URL: this node's scheme and path, the peer's host and port. */
    @Override
    public String endpointAt(String host, int port) {
        URI own = URI.create(localEndpoint);
        return PeerUrls.normalize(own.getScheme() + "://" + hostForUrl(host) + ":" + port + own.getRawPath());
    }

    @Override
    public int localPort() {
        return localEndpoint == null ? -1 : URI.create(localEndpoint).getPort();
    }

    /** Peers announce themselves by their endpoint URL, in any spelling. */
    private void hello(String endpoint) {
        try {
            peerSaidHello(PeerUrls.normalize(endpoint));
        } catch (IllegalArgumentException e) {
            // not a peer URL (a client without a listener): nothing to end
        }
    }

    /** A peer that crashed while idle is found by a probe: no membership of RMI's or HTTP's tells. */
    @Override
    protected boolean probesIdlePeers() {
        return true;
    }

    @Override
    protected HessianPeerChannel newChannel(String endpoint) {
        return new HessianPeerChannel(endpoint, localEndpoint, settings, clientTls,
                context.maxFrameBytes() + 64 * 1024L, context.threads("sender"), context.clock(),
                context.clusterSecret());
    }

    @Override
    public void stop() {
        if (!markStopped()) {
            return;
        }
        if (server != null) {
            server.stop(0);
        }
        if (relay != null) {
            relay.close(2000);
        }
        if (requests != null) {
            requests.shutdown();
        }
        stopChannels(2000);
    }
}
