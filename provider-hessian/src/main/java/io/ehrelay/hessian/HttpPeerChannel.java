package io.ehrelay.hessian;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.concurrent.ThreadFactory;

import javax.net.ssl.HttpsURLConnection;
import javax.net.ssl.SSLContext;

import io.ehrelay.relay.PeerChannel;
import io.ehrelay.relay.RelayCalls;
import io.ehrelay.relay.RelayException;
import io.ehrelay.spi.InboundHandler;

/**
 * One peer's endpoint over HTTP(S), persistent connections (the JDK keeps them alive between calls): the relay
 * protocol as Hessian calls. Connecting is a {@code hello} call, which also proves the cluster token.
 */
final class HttpPeerChannel extends PeerChannel implements RelayCalls {

    private final URL url;
    private final String self;
    private final HessianSettings settings;
    private final SSLContext tls;

    HttpPeerChannel(String endpoint, String self, HessianSettings settings, SSLContext tls, ThreadFactory threads) {
        super(endpoint, settings.peerOutboundMaxBytes, settings.retryMaxMillis, threads);
        try {
            this.url = new URL(endpoint);
        } catch (IOException e) {
            throw new IllegalArgumentException("not a URL: " + endpoint, e);
        }
        this.self = self;
        this.settings = settings;
        this.tls = tls;
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
        invoke("hello", Envelope.of(fromEndpoint, null));
    }

    @Override
    public void deliver(String fromEndpoint, byte[] batch) throws IOException {
        invoke("deliver", Envelope.of(fromEndpoint, batch));
    }

    @Override
    public void post(String fromEndpoint, byte[] batch) throws IOException {
        invoke("post", Envelope.of(fromEndpoint, batch));
    }

    @Override
    public long openState(String cacheName) throws IOException {
        Envelope e = Envelope.of(self, null);
        e.cacheName = cacheName;
        Object r = invoke("openState", e);
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
        Object r = invoke("nextState", e);
        if (r != null && !(r instanceof byte[])) {
            throw new RelayException("nextState answered " + r.getClass().getName());
        }
        return (byte[]) r;
    }

    private Object invoke(String method, Envelope envelope) throws IOException {
        byte[] body = HessianWire.call(method, envelope);
        HttpURLConnection c = (HttpURLConnection) url.openConnection();
        if (c instanceof HttpsURLConnection && tls != null) {
            ((HttpsURLConnection) c).setSSLSocketFactory(tls.getSocketFactory());
        }
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setUseCaches(false);
        c.setConnectTimeout(settings.connectTimeoutMillis);
        c.setReadTimeout(settings.readTimeoutMillis);
        c.setFixedLengthStreamingMode(body.length);
        c.setRequestProperty("Content-Type", HessianWire.CONTENT_TYPE);
        if (settings.clusterToken != null) {
            c.setRequestProperty(HessianSettings.TOKEN_HEADER, settings.clusterToken);
        }
        try (OutputStream out = c.getOutputStream()) {
            out.write(body);
        }
        int status = c.getResponseCode();
        if (status == 401) {
            drain(c.getErrorStream());
            throw new RelayException("peer " + endpoint() + " answered 401: clusterToken missing or different");
        }
        if (status != 200) {
            byte[] err = drain(c.getErrorStream());
            String why = "HTTP " + status;
            if (err.length > 0) {
                try {
                    HessianWire.readReply(err);
                } catch (RelayException fault) {
                    why += ": " + fault.getMessage();
                } catch (IOException ignored) {
                    // not a Hessian fault
                }
            }
            throw new RelayException("peer " + endpoint() + " refused " + method + " (" + why + ")");
        }
        byte[] reply;
        try (InputStream in = c.getInputStream()) {
            reply = in.readAllBytes();
        }
        return HessianWire.readReply(reply);
    }

    private static byte[] drain(InputStream in) throws IOException {
        if (in == null) {
            return new byte[0];
        }
        try (in) {
            return in.readNBytes(64 * 1024);
        }
    }
}
