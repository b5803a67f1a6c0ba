package io.ehrelay.hessian;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import javax.net.ssl.SSLContext;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;

import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.rpc.RpcService;
import io.ehrelay.spi.TransportContext;

/**
 * Hessian over HTTP(S) as an ehrelay transport: the JDK's built-in HTTP server on {@code hostName:port/path}
 * (HTTPS with a key store), served by {@code httpThreads} threads, and one {@link HessianPeerChannel} per peer.
 * Thread-safe.
 */
final class HessianTransport extends io.ehrelay.spi.rpc.RpcTransport<HessianPeerChannel> {

    static {
        // the JDK's HTTP server writes a response's headers and body separately: without TCP_NODELAY, Nagle's
        // algorithm meets the client's delayed ACK and every call waits ~40 ms. Read once, when the first
        // server of the JVM starts; an explicit setting wins.
        if (System.getProperty("sun.net.httpserver.nodelay") == null) {
            System.setProperty("sun.net.httpserver.nodelay", "true");
        }
    }

    private final HessianSettings settings;
    private TransportContext context;
    private SSLContext clientTls;
    private HttpServer server;
    private ThreadPoolExecutor httpThreads;
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
        if (ls.https()) {
            HttpsServer https = HttpsServer.create(address, 128);
            https.setHttpsConfigurator(new HttpsConfigurator(ls.tls.context()));
            server = https;
        } else {
            server = HttpServer.create(address, 128);
        }
        relay = new RpcService(ctx.inbound(), ctx.maxFrameBytes(), ctx.threads("apply"),
                settings.callTimeoutMillis / 2, this::hello, ctx.clock());
        httpThreads = new ThreadPoolExecutor(ls.httpThreads, ls.httpThreads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), ctx.threads("http"));
        httpThreads.allowCoreThreadTimeOut(true);
        server.setExecutor(httpThreads);
        server.createContext(ls.path, new RpcHttpHandler(relay, settings.clusterToken,
                ctx.maxFrameBytes() + 64 * 1024L, ctx.metrics(), ctx.peerGate(), io.ehrelay.spi.rpc.RpcSessions.of(ctx)));
        server.start();
        localEndpoint = PeerUrls.normalize((ls.https() ? "https" : "http") + "://" + hostForUrl(listener.hostName())
                + ":" + server.getAddress().getPort() + ls.path);
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
        if (context != null && context.clusterSecret() != null) {
            return settings.clusterToken != null ? "the cluster secret (clusterSecret) and the cluster token (clusterToken)"
                    : "the cluster secret (clusterSecret)";
        }
        return settings != null && settings.clusterToken != null ? "the cluster token (clusterToken)" : null;
    }

    @Override
    public boolean provesClusterSecret() {
        return true;
    }

    @Override
    public String normalizePeer(String configured) {
        return PeerUrls.normalize(configured);
    }

    /** Peers announce themselves by their endpoint URL, in any spelling. */
    private void hello(String endpoint) {
        try {
            peerSaidHello(PeerUrls.normalize(endpoint));
        } catch (IllegalArgumentException e) {
            // not a peer URL (a client without a listener): nothing to end
        }
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
        if (httpThreads != null) {
            httpThreads.shutdownNow();
        }
        stopChannels(2000);
    }
}
