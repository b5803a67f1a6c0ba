package io.ehrelay.hessian;

import java.io.IOException;
import java.util.concurrent.ThreadFactory;


import io.ehrelay.relay.PeerChannel;
import io.ehrelay.relay.RelayCalls;
import io.ehrelay.relay.RelayException;
import io.ehrelay.spi.InboundHandler;

/**
 * One peer's endpoint over HTTP(S) through the transport's {@code java.net.http} client (persistent HTTP/1.1
 * connections with TCP_NODELAY): the relay protocol as Hessian calls. Connecting is a {@code hello} call, which also proves the cluster token.
 */
final class HttpPeerChannel extends PeerChannel implements RelayCalls {

    private final java.net.URI uri;
    private final String self;
    private final HessianSettings settings;
    private final java.net.http.HttpClient client;

    /** @param client the transport's HTTP/1.1 client (persistent connections, TCP_NODELAY) */
    HttpPeerChannel(String endpoint, String self, HessianSettings settings, java.net.http.HttpClient client,
                    ThreadFactory threads) {
        super(endpoint, settings.peerOutboundMaxBytes, settings.retryMaxMillis, threads);
        this.uri = java.net.URI.create(endpoint);
        this.self = self;
        this.settings = settings;
        this.client = client;
    }

    @Override
    protected void connect() throws IOException {
        if (self != null) {
            hello(self);
        } else {
            hello("client");
        }
    }

    @Override
    protected void disconnect() {
        // nothing cached beyond the JDK's idle connections, which it drops itself when they fail
    }

    @Override
    protected boolean peerGone(Exception failure) {
        return failure instanceof IOException && !(failure instanceof RelayException);
    }

    @Override
    protected void transmit(byte[] batch, boolean acknowledge) throws IOException {
        if (acknowledge) {
            deliver(self, batch);
        } else {
            post(self, batch);
        }
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
            throw new RelayException("openState answered " + r);
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
        byte[] body = HessianWire.call(method, envelope);
        java.net.http.HttpRequest.Builder request = java.net.http.HttpRequest.newBuilder(uri)
                .timeout(java.time.Duration.ofMillis(settings.readTimeoutMillis))
                .header("Content-Type", HessianWire.CONTENT_TYPE)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofByteArray(body));
        if (settings.clusterToken != null) {
            request.header(HessianSettings.TOKEN_HEADER, settings.clusterToken);
        }
        java.net.http.HttpResponse<byte[]> response;
        try {
            response = client.send(request.build(), java.net.http.HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted calling " + endpoint());
        }
        int status = response.statusCode();
        if (status == 401) {
            throw new RelayException("peer " + endpoint() + " answered 401: clusterToken missing or different");
        }
        if (status != 200) {
            String why = "HTTP " + status;
            if (response.body() != null && response.body().length > 0) {
                try {
                    HessianWire.readReply(response.body());
                } catch (RelayException fault) {
                    why += ": " + fault.getMessage();
                } catch (IOException ignored) {
                    // not a Hessian fault
                }
            }
            throw new RelayException("peer " + endpoint() + " refused " + method + " (" + why + ")");
        }
        return response.body();
    }

}
