package io.ehrelay.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Consumer;
import javax.net.ssl.SSLException;

import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.InboundSlots;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.TransportContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection a peer opened to this node, served by one thread: it applies event batches in arrival order,
 * acknowledges those that ask for it, and answers state requests with chunks. A frame with a bad header
 * (magic, version, type, length) closes the connection; a damaged batch inside a sound frame is counted,
 * answered with NACK when acknowledged, and the connection stays. Nothing from a damaged frame is applied. With
 * TLS, the TLS handshake comes first, within the same time as HELLO; a peer that fails it is refused.
 */
final class InboundConnection implements Runnable, InboundSlots.Connection {

    private static final Logger LOG = LoggerFactory.getLogger(InboundConnection.class);
    private static final RateLimitedLog WARN = new RateLimitedLog(LOG, 10_000);
    private static final byte[] EMPTY = new byte[0];
    private static final int MAX_HELLO = 1024;
    /**
     * How long a new connection may take for the TLS handshake, and again to say HELLO (and, with a cluster secret,
     * to prove it); tests shorten it.
     */
    static volatile int handshakeMillis = 10_000;
    static final String CLIENT_PROOF = "ehrelay tcp client";
    static final String SERVER_PROOF = "ehrelay tcp server";

    private final FrameChannel channel;
    private final TlsChannel tls;
    private final TransportContext context;
    private final Runnable onClose;
    private final Consumer<String> onHello;
    private volatile String from;
    private final InetAddress remoteAddress;
    private final long acceptedNanos;
    /** Set once the peer said HELLO (and, with a cluster secret, proved it). */
    private volatile boolean established;

    InboundConnection(SocketChannel sc, TransportContext context, Runnable onClose,
                      Consumer<String> onHello) throws IOException {
        this(sc, null, context, onClose, onHello, null, 0);
    }

    /**
     * @param tls              TLS on {@code sc}, its handshake still to be done, or {@code null}
     * @param budget           the node's receive-buffer bound shared by its inbound connections, or {@code null}
     * @param budgetWaitMillis how long a frame waits for room in it before the connection is closed
     */
    InboundConnection(SocketChannel sc, TlsChannel tls, TransportContext context, Runnable onClose,
                      Consumer<String> onHello, InboundBudget budget, long budgetWaitMillis)
            throws IOException {
        this.onHello = onHello;
        sc.socket().setTcpNoDelay(true);
        this.tls = tls;
        this.channel = new FrameChannel(sc, tls, context.maxFrameBytes(), budget, budgetWaitMillis,
                context.clock());
        this.acceptedNanos = channel.lastReadNanos();
        this.context = context;
        this.onClose = onClose;
        this.from = String.valueOf(sc.getRemoteAddress());
        SocketAddress remote = sc.getRemoteAddress();
        this.remoteAddress = remote instanceof InetSocketAddress
                ? ((InetSocketAddress) remote).getAddress() : null;
    }

    @Override
    public void run() {
        try {
            if (tls != null && !tlsHandshake()) {
                return;
            }
            FrameChannel.Frame hello = channel.readWithin(MAX_HELLO, handshakeMillis);
            if (hello == null) {
                return;
            }
            if (hello.header.type() != Frames.Type.HELLO) {
                throw new MalformedFrameException("connection did not start with a HELLO frame");
            }
            String endpoint = hello.length() > 0 ? new String(hello.copy(), StandardCharsets.UTF_8) : "";
            ClusterSecret secret = context.clusterSecret();
            if (secret != null && !authenticated(secret, hello.copy())) {
                return;
            }
            established = true;
            if (!endpoint.isEmpty()) {
                from = endpoint + " (" + from + ")";
                onHello.accept(endpoint);
            }
            while (true) {
                FrameChannel.Frame f = channel.read();
                if (f == null) {
                    return;
                }
                serve(f);
            }
        } catch (MalformedFrameException e) {
            context.metrics().markMalformedFrame();
            WARN.warn("frame:" + from, "ehrelay: closing connection from {}: {} (counted in rejected)", from,
                    e.getMessage());
        } catch (SocketTimeoutException e) {
            WARN.warn("handshake:" + remoteAddress, "ehrelay: closing connection from {}: no handshake within {} ms",
                    from, handshakeMillis);
        } catch (IOException e) {
            LOG.debug("connection from {} ended: {}", from, e.toString());
        } finally {
            close();
            channel.dispose(); // this thread read it: its buffer's memory is freed now, not at the next GC
        }
    }

    /**
     * The TLS handshake, listener's side. A peer that fails it (no TLS, a certificate this node does not trust, or
     * none when {@code tlsClientAuth=true}; or it does not trust this node's) is counted in {@code unauthorized},
     * logged, and its connection closed.
     */
    private boolean tlsHandshake() throws IOException {
        try {
            tls.handshake(handshakeMillis);
            return true;
        } catch (SSLException e) {
            context.metrics().count(MetricNames.UNAUTHORIZED).mark();
            WARN.warn("tls:" + remoteAddress, "ehrelay: refused a connection from {} (counted in unauthorized): the "
                    + "TLS handshake failed: {}. Peers need tls=true, a tlsTrustStore with this node's certificate{}",
                    from, e.getMessage(), tlsClientAuthHint());
            return false;
        }
    }

    private String tlsClientAuthHint() {
        return tls.needsClientAuth() ? ", and their certificate in this node's tlsTrustStore (tlsClientAuth=true)"
                : "";
    }

    /**
     * The cluster-secret handshake, listener's side: sends a fresh nonce, expects the connecting node's nonce and
     * its proof over both nonces and the HELLO it sent, answers with this node's proof. A peer that does not
     * prove the secret is counted in {@code unauthorized}, logged, and its connection closed.
     */
    private boolean authenticated(ClusterSecret secret, byte[] hello)
            throws IOException, MalformedFrameException {
        byte[] challenge = ClusterSecret.nonce();
        byte[] body = new byte[1 + challenge.length];
        body[0] = 1;
        System.arraycopy(challenge, 0, body, 1, challenge.length);
        channel.write(Frames.Type.CHALLENGE, 0, body);
        FrameChannel.Frame auth = channel.readWithin(2 * ClusterSecret.PROOF_BYTES, handshakeMillis);
        String why;
        if (auth == null) {
            why = "closed the connection instead of proving it";
        } else if (auth.header.type() != Frames.Type.AUTH
                || auth.length() != ClusterSecret.NONCE_BYTES + ClusterSecret.PROOF_BYTES) {
            why = "sent " + auth.header.type() + " instead of proving it (is clusterSecret set on that node?)";
        } else {
            byte[] a = auth.copy();
            byte[] theirs = Arrays.copyOfRange(a, 0, ClusterSecret.NONCE_BYTES);
            byte[] proof = Arrays.copyOfRange(a, ClusterSecret.NONCE_BYTES, a.length);
            if (secret.verifies(proof, CLIENT_PROOF, challenge, theirs, hello)) {
                channel.write(Frames.Type.AUTH, 0, secret.proof(SERVER_PROOF, theirs, challenge));
                return true;
            }
            why = "answered with a wrong proof (another clusterSecret)";
        }
        context.metrics().count(MetricNames.UNAUTHORIZED).mark();
        WARN.warn("secret:" + remoteAddress, "ehrelay: refused a connection from {} (counted in unauthorized): it did "
                + "not prove the cluster secret: it {}", from, why);
        return false;
    }

    private void serve(FrameChannel.Frame f) throws IOException, MalformedFrameException {
        long corr = f.header.correlationId();
        switch (f.header.type()) {
            case EVENTS:
                try {
                    context.inbound().onEvents(from, f.body());
                } catch (MalformedFrameException e) {
                    // counted and logged by the node; the framing is sound, so the connection stays
                } catch (RuntimeException e) {
                    WARN.warn("apply:" + from, "ehrelay: applying a batch from {} failed: {}", from, e.toString());
                }
                break;
            case EVENTS_ACK:
                try {
                    context.inbound().onEvents(from, f.body());
                    channel.write(Frames.Type.ACK, corr, EMPTY);
                } catch (MalformedFrameException | RuntimeException e) {
                    channel.write(Frames.Type.NACK, corr, reason(e));
                }
                break;
            case STATE_REQUEST:
                serveState(f, corr);
                break;
            default:
                throw new MalformedFrameException("unexpected " + f.header.type() + " frame on an inbound connection");
        }
    }

    private void serveState(FrameChannel.Frame f, long corr) throws IOException, MalformedFrameException {
        if (f.length() < 5 || f.length() > 4 + 65535) {
            throw new MalformedFrameException("state request of " + f.length() + " bytes");
        }
        byte[] request = f.copy();
        int requested = ByteBuffer.wrap(request).getInt();
        int maxFrame = context.maxFrameBytes();
        int chunk = Math.max(1024, Math.min(requested, maxFrame / 2));
        String cache = new String(request, 4, request.length - 4, StandardCharsets.UTF_8);
        try {
            context.inbound().onStateRequest(cache, chunk, bytes -> channel.write(Frames.Type.STATE_CHUNK, corr, bytes));
            channel.write(Frames.Type.STATE_END, corr, EMPTY);
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            channel.write(Frames.Type.NACK, corr, reason(e));
        }
    }

    private static byte[] reason(Exception e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        byte[] b = m.getBytes(StandardCharsets.UTF_8);
        return b.length <= 4096 ? b : Arrays.copyOf(b, 4096);
    }

    @Override
    public void evict() {
        close();
    }

    @Override
    public void closeQuietly() {
        close();
    }

    void close() {
        try {
            channel.close();
        } catch (IOException e) {
            LOG.debug("closing connection from {}: {}", from, e.toString());
        }
        channel.releaseBudget();
        onClose.run();
    }

    @Override
    public long acceptedNanos() {
        return acceptedNanos;
    }

    @Override
    public long lastActiveNanos() {
        return channel.lastReadNanos();
    }

    /** Until the peer said HELLO (after TLS, and with a cluster secret its proof). */
    @Override
    public boolean inHandshake() {
        return !established;
    }

    @Override
    public boolean inFrame() {
        return channel.inFrame();
    }

    @Override
    public String remote() {
        return from;
    }
}
