package io.ehrelay.hessian;

import java.io.IOException;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.concurrent.ThreadFactory;
import javax.net.ssl.SSLContext;

import io.ehrelay.internal.rpc.PeerChannel;
import io.ehrelay.internal.rpc.RpcCalls;
import io.ehrelay.internal.rpc.RpcException;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.InboundHandler;

/**
 * One peer's endpoint over HTTP(S): the relay protocol as Hessian calls, POSTed over persistent HTTP/1.1
 * connections on the calling thread ({@link HttpConnections}). Connecting is a {@code hello} call, which also
 * proves the cluster token.
 */
final class HessianPeerChannel extends PeerChannel implements RpcCalls {

    private final String self;
    private final HttpConnections connections;
    private final int timeoutMillis;

    /** @param tls the context for {@code https} peers ({@code null}: the JDK's default) */
    private final ClusterSecret secret;

    /**
     * The body of batch calls, reused: {@link PeerChannel} runs transmits one at a time (its sender thread, or a
     * synchronous put's thread, under the same lock). It keeps the size of the largest call it held (about
     * {@code batchMaxBytes}) while the channel lives.
     */
    private final HessianWire.Body batchBody = new HessianWire.Body();

    /** @param secret the cluster secret to open sessions with, or {@code null} */
    HessianPeerChannel(String endpoint, String self, HessianSettings settings, SSLContext tls,
                       long maxAnswerBytes, ThreadFactory threads, Clock clock, ClusterSecret secret) {
        super(endpoint, settings.peerOutboundMaxBytes, settings.retryMaxMillis, threads, clock);
        this.secret = secret;
        this.self = self;
        this.timeoutMillis = settings.callTimeoutMillis;
        try {
            this.connections = new HttpConnections(endpoint, tls, HessianWire.CONTENT_TYPE,
                    settings.clusterToken == null ? Collections.emptyList()
                            : Collections.singletonList(HessianSettings.TOKEN_HEADER + ": " + settings.clusterToken),
                    settings.connectTimeoutMillis, settings.callTimeoutMillis, maxAnswerBytes, clock);
        } catch (IOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    @Override
    protected void connect() throws IOException {
        if (secret != null) {
            connections.sessionHeader(null);
            String from = self != null ? self : "client";
            RpcSessions.Credentials credentials = RpcSessions.open(secret, from,
                    new RpcSessions.Listener() {
                        @Override
                        public byte[] challenge() throws IOException {
                            return HessianWire.readBinaryReply(invoke("challenge", Envelope.of(from, null)));
                        }

                        @Override
                        public byte[] authenticate(byte[] challenge, byte[] response) throws IOException {
                            byte[] both = Arrays.copyOf(challenge, challenge.length + response.length);
                            System.arraycopy(response, 0, both, challenge.length, response.length);
                            return HessianWire.readBinaryReply(invoke("authenticate", Envelope.of(from, both)));
                        }
                    });
            // every request names the session in a credential of its own (a recorded one is not served again)
            connections.sessionHeader(() -> HessianSettings.SESSION_HEADER + ": "
                    + Base64.getEncoder().encodeToString(credentials.next()));
        }
        if (self != null) {
            hello(self);
        } else {
            hello("client");
        }
    }

    /** The peer's hello. */
    @Override
    protected boolean probe() throws IOException {
        hello(self != null ? self : "client");
        return true;
    }

    @Override
    protected void disconnect() {
        connections.dropIdle();
    }

    @Override
    protected boolean peerGone(Exception failure) {
        // a refused session (e.g. the peer restarted and forgot it) is opened again on the next connect
        return failure instanceof IOException && !(failure instanceof RpcException)
                || RpcSessions.isRefusal(failure);
    }

    /** Sends an array's batch the way {@link #transmit(io.ehrelay.spi.Batch, boolean)} sends every batch. */
    @Override
    protected void transmit(byte[] batch, boolean acknowledge) throws IOException {
        transmit(new Batch(batch, 0), acknowledge);
    }

    /** Writes the batch from its buffer into the reused body: no array of the batch's size per send. */
    @Override
    protected void transmit(Batch batch, boolean acknowledge) throws IOException {
        String method = acknowledge ? "deliver" : "post";
        HessianWire.call(method, Envelope.of(self, null), batch.buffer(), batchBody);
        HessianWire.readReply(answer(method, connections.post(batchBody.array(), batchBody.size(),
                callTimeoutMillis(timeoutMillis))));
    }

    @Override
    protected void transferState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink)
            throws Exception {
        fetchThroughRelay(this, cacheName, maxChunkBytes, sink);
    }

    @Override
    public void hello(String fromEndpoint) throws IOException {
        HessianWire.readReply(invoke("hello", Envelope.of(fromEndpoint, null)));
    }

    @Override
    public void deliver(String fromEndpoint, byte[] batch) throws IOException {
        HessianWire.readReply(invoke("deliver", Envelope.of(fromEndpoint, batch)));
    }

    @Override
    public void post(String fromEndpoint, byte[] batch) throws IOException {
        HessianWire.readReply(invoke("post", Envelope.of(fromEndpoint, batch)));
    }

    @Override
    public long openState(String cacheName) throws IOException {
        Envelope e = Envelope.of(self, null);
        e.cacheName = cacheName;
        Object r = HessianWire.readReply(invoke("openState", e));
        if (!(r instanceof Number)) {
            throw new RpcException("openState answered " + r);
        }
        return ((Number) r).longValue();
    }

    @Override
    public byte[] nextState(long transferId, int maxChunkBytes) throws IOException {
        Envelope e = Envelope.of(self, null);
        e.transferId = transferId;
        e.maxChunkBytes = maxChunkBytes;
        return HessianWire.readBinaryReply(invoke("nextState", e));
    }

    /** @return the body of the 200 reply */
    private byte[] invoke(String method, Envelope envelope) throws IOException {
        return invoke(method, envelope, timeoutMillis);
    }

    private byte[] invoke(String method, Envelope envelope, int timeoutMillis) throws IOException {
        return answer(method, connections.post(HessianWire.call(method, envelope), timeoutMillis));
    }

    /** @return the body of the 200 reply; other answers become an {@link RpcException} saying why */
    private byte[] answer(String method, HttpConnections.Answer response) throws IOException {
        int status = response.status;
        if (status == 401) {
            throw new RpcException("peer " + endpoint() + " answered 401 (" + RpcSessions.UNAUTHORIZED
                    + (secret != null ? "session refused: clusterSecret missing or different, or the session ended"
                    : "clusterToken missing or different") + ")");
        }
        if (status == 404) {
            // the JDK's server answers 404 for a path without a context: no ehrelay listener there
            throw new RpcException("peer " + endpoint() + " answered 404: no ehrelay listener at that path (the peer "
                    + "URL's path must be the listener's path property, default /ehrelay)");
        }
        if (status == 403) {
            throw new RpcException("peer " + endpoint() + " answered 403: it does not serve this host without "
                    + "authentication (list this host in its unauthenticatedPeers, or set the same clusterSecret on "
                    + "every node)");
        }
        if (status != 200) {
            String why = "HTTP " + status;
            if (response.body != null && response.body.length > 0) {
                try {
                    HessianWire.readReply(response.body);
                } catch (RpcException fault) {
                    why += ": " + fault.getMessage();
                } catch (IOException ignored) {
                    // not a Hessian fault
                }
            }
            throw new RpcException("peer " + endpoint() + " refused " + method + " (" + why + ")");
        }
        return response.body;
    }

}
