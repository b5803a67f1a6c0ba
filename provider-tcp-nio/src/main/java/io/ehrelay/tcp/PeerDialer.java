package io.ehrelay.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.TransportContext;

/**
 * Opens one connection of a {@link TcpPeerChannel} to its peer: the socket ({@code TCP_NODELAY}, keep-alive, the
 * buffer sizes asked for), the TLS handshake when TLS is on, HELLO with this node's endpoint, and, with a cluster
 * secret, the proof both sides give. Each step is bounded by {@code connectTimeoutMillis}; a failure closes what
 * was opened and names the peer. Thread-safe (each call opens its own connection).
 */
final class PeerDialer {

    private final Peer peer;
    private final InetSocketAddress address;
    private final TcpSettings settings;
    private final TransportContext context;
    /** TLS for the connection, or {@code null}. */
    private final SSLContext tls;
    private final String localEndpoint;

    PeerDialer(Peer peer, InetSocketAddress address, TcpSettings settings, TransportContext context,
               String localEndpoint, SSLContext tls) {
        this.peer = peer;
        this.address = address;
        this.settings = settings;
        this.context = context;
        this.localEndpoint = localEndpoint;
        this.tls = tls;
    }

    /** A connection to the peer, its handshakes done: ready for frames. */
    FrameChannel dial() throws IOException {
        SocketChannel sc = SocketChannel.open();
        TlsChannel secured = null;
        FrameChannel ch;
        try {
            sc.socket().setTcpNoDelay(true);
            sc.socket().setKeepAlive(true);
            if (settings.socketBufferBytes > 0) {
                sc.socket().setSendBufferSize(settings.socketBufferBytes);
                sc.socket().setReceiveBufferSize(settings.socketBufferBytes);
            }
            InetSocketAddress resolved = new InetSocketAddress(address.getHostString(), address.getPort());
            if (resolved.isUnresolved()) {
                throw new ConnectException("cannot resolve " + address.getHostString());
            }
            sc.socket().connect(resolved, (int) settings.connectTimeoutMillis);
            if (tls != null) {
                secured = TlsChannel.client(sc, tls, address.getHostString(), address.getPort(), context.clock());
                handshake(secured);
            }
            ch = new FrameChannel(sc, secured, context.maxFrameBytes(), context.clock());
            byte[] hello = localEndpoint.getBytes(StandardCharsets.UTF_8);
            ch.write(Frames.Type.HELLO, 0, hello);
            ClusterSecret secret = context.clusterSecret();
            if (secret != null) {
                authenticate(ch, secret, hello);
            }
        } catch (IOException | RuntimeException e) {
            if (secured != null) {
                secured.close();
            }
            sc.close();
            throw e;
        }
        return ch;
    }

    /** The TLS handshake; a failure names the peer, and is logged (rate-limited): it is a configuration error. */
    private void handshake(TlsChannel secured) throws IOException {
        try {
            secured.handshake(settings.connectTimeoutMillis);
        } catch (SSLException e) {
            TcpPeerChannel.WARN.warn("tls:" + peer, "ehrelay: TLS handshake with peer {} failed: {}. Both need tls=true, and each "
                    + "the other's certificate in its tlsTrustStore", peer, e.getMessage());
            ConnectException c = new ConnectException("TLS handshake with peer " + peer + " failed: " + e.getMessage());
            c.initCause(e);
            throw c;
        } catch (SocketTimeoutException e) {
            throw new ConnectException("peer " + peer + " did not finish the TLS handshake within "
                    + settings.connectTimeoutMillis + " ms (is tls=true there?)");
        } catch (EOFException e) {
            throw new ConnectException("peer " + peer + " closed the connection during the TLS handshake (is tls=true "
                    + "there?)");
        }
    }

    /**
     * The cluster-secret handshake, connecting side: answers the listener's nonce with this node's nonce and its
     * proof over both and the HELLO, then checks the listener's proof; nothing is sent to a peer that cannot prove
     * the secret. Bounded by {@code connectTimeoutMillis} per step.
     */
    private void authenticate(FrameChannel ch, ClusterSecret secret, byte[] hello) throws IOException {
        int timeout = (int) Math.min(Integer.MAX_VALUE, settings.connectTimeoutMillis);
        try {
            FrameChannel.Frame challenge = ch.readWithin(1 + ClusterSecret.NONCE_BYTES, timeout);
            if (challenge == null || challenge.header.type() != Frames.Type.CHALLENGE
                    || challenge.length() != 1 + ClusterSecret.NONCE_BYTES) {
                throw new ConnectException("peer " + peer + " did not ask this node to prove the cluster secret: "
                        + "set the same clusterSecret on every node");
            }
            byte[] theirs = Arrays.copyOfRange(challenge.copy(), 1, 1 + ClusterSecret.NONCE_BYTES);
            byte[] ours = ClusterSecret.nonce();
            byte[] proof = secret.proof(InboundConnection.CLIENT_PROOF, theirs, ours, hello);
            byte[] body = new byte[ours.length + proof.length];
            System.arraycopy(ours, 0, body, 0, ours.length);
            System.arraycopy(proof, 0, body, ours.length, proof.length);
            ch.write(Frames.Type.AUTH, 0, body);
            FrameChannel.Frame answer = ch.readWithin(ClusterSecret.PROOF_BYTES, timeout);
            if (answer == null || answer.header.type() != Frames.Type.AUTH
                    || !secret.verifies(answer.copy(), InboundConnection.SERVER_PROOF, ours, theirs)) {
                throw new ConnectException("peer " + peer + " did not prove the cluster secret (another "
                        + "clusterSecret there, or not an ehrelay node): nothing is sent to it");
            }
        } catch (SocketTimeoutException e) {
            throw new ConnectException("peer " + peer + " did not ask this node to prove the cluster secret within "
                    + timeout + " ms: set the same clusterSecret on every node");
        } catch (MalformedFrameException e) {
            throw new ConnectException("peer " + peer + " answered the handshake with a damaged frame: "
                    + e.getMessage());
        }
    }
}
