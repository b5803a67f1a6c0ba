package io.ehrelay.tcp;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

import io.ehrelay.internal.Backoff;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP transport's sender to one peer (not an {@link io.ehrelay.internal.rpc.PeerChannel}: it streams frames
 * instead of making calls): one connection, a writer thread that connects (with backoff after a failure, TLS
 * handshake after the connect) and writes queued frames, and while connected a reader thread for the peer's
 * answers. At most {@code peerOutboundMaxBytes} wait; past it, and while the peer is unreachable, sends fail at
 * once. Time: the given {@link Clock}. Thread-safe.
 */
final class TcpPeerChannel {

    private static final Logger LOG = LoggerFactory.getLogger(TcpPeerChannel.class);
    /** TLS failures with a peer, from the dialer and from the reader alike: one line per peer and 10 s. */
    static final RateLimitedLog WARN = new RateLimitedLog(LOG, 10_000);
    private static final int MAX_COALESCED_FRAMES = 256;
    private static final long MAX_COALESCED_BYTES = 4L << 20;

    private final Peer peer;
    private final InetSocketAddress address;
    private final TcpSettings settings;
    private final TransportContext context;
    private final TransportMetrics.Count connectFailures;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final ArrayDeque<PendingFrame> pending = new ArrayDeque<>();
    private long pendingBytes;
    private final PeerAnswers answers;
    private final AtomicLong correlations = new AtomicLong();
    private final Thread writer;
    private volatile FrameChannel channel;
    /** Open until the first connection attempt ended, either way. */
    private final CountDownLatch firstAttempt = new CountDownLatch(1);
    private volatile Thread reader;
    private volatile boolean closed;
    private final Backoff backoff;
    private final PeerDialer dialer;
    private volatile boolean keepConnected;
    private volatile String lastFailure;

    TcpPeerChannel(Peer peer, TcpSettings settings, TransportContext context, String localEndpoint,
                   Clock clock) {
        this(peer, settings, context, localEndpoint, clock, null);
    }

    /** @param tls the context of TLS connections, or {@code null} for plain ones */
    TcpPeerChannel(Peer peer, TcpSettings settings, TransportContext context, String localEndpoint,
                   Clock clock, SSLContext tls) {
        this.peer = peer;
        this.backoff = Backoff.upTo(settings.retryMaxMillis, clock);
        this.address = Endpoints.parse(peer.endpoint());
        this.settings = settings;
        this.context = context;
        this.connectFailures = context.metrics().count(MetricNames.CONNECT_FAILURES);
        this.answers = new PeerAnswers(peer);
        this.dialer = new PeerDialer(peer, address, settings, context, localEndpoint == null ? "" : localEndpoint,
                tls);
        this.writer = context.threads("tcp-out").newThread(this::writeLoop);
        writer.start();
    }

    boolean isConnected() {
        return channel != null;
    }

    /** {@link #isConnected()}, after waiting up to {@code millis} for the first connection attempt to end. */
    boolean isConnectedWithin(long millis) throws InterruptedException {
        if (channel == null) {
            firstAttempt.await(millis, TimeUnit.MILLISECONDS);
        }
        return channel != null;
    }

    /** The peer showed it is up (it connected to us): drop the backoff and connect again now. */
    void retryNow() {
        if (channel == null && !closed) {
            backoff.retryNow();
            lock.lock();
            try {
                notEmpty.signal();
            } finally {
                lock.unlock();
            }
        }
    }

    /** Whether this connection goes to {@code endpoint} (same text, or the same resolved address and port). */
    boolean goesTo(String endpoint) {
        if (peer.endpoint().equals(endpoint)) {
            return true;
        }
        try {
            InetSocketAddress other = Endpoints.parse(endpoint);
            return other.getPort() == address.getPort()
                    && InetAddress.getByName(other.getHostString())
                            .equals(InetAddress.getByName(address.getHostString()));
        } catch (IOException | IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * Keeps this connection open while idle: the writer connects now, and again (with backoff) whenever the
     * connection drops, so the first event to a healthy peer never waits for a connect, and
     * {@code peersReachable} tells the truth.
     */
    void connectAhead() {
        if (!keepConnected) {
            keepConnected = true;
            lock.lock();
            try {
                notEmpty.signal();
            } finally {
                lock.unlock();
            }
        }
    }

    CompletableFuture<Void> send(Batch batch, boolean acknowledge) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        long corr = acknowledge ? correlations.incrementAndGet() : 0;
        if (acknowledge) {
            answers.awaitAck(corr, f);
        }
        offer(new PendingFrame(acknowledge ? Frames.Type.EVENTS_ACK : Frames.Type.EVENTS, corr,
                new ByteBuffer[] {batch.buffer()}, batch.length(), f, !acknowledge));
        return f;
    }

    CompletableFuture<Void> requestState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        long corr = correlations.incrementAndGet();
        answers.awaitState(corr, sink, f);
        byte[] name = cacheName.getBytes(StandardCharsets.UTF_8);
        ByteBuffer body = ByteBuffer.allocate(4 + name.length).putInt(maxChunkBytes).put(name);
        body.flip();
        offer(new PendingFrame(Frames.Type.STATE_REQUEST, corr, new ByteBuffer[] {body}, body.remaining(), f, false));
        return f;
    }

    private void offer(PendingFrame p) {
        if (closed) {
            p.future.completeExceptionally(new ConnectException("transport stopped"));
            return;
        }
        long wait = channel == null ? backoff.remainingMillis() : 0;
        if (wait > 0) {
            p.future.completeExceptionally(new ConnectException("peer " + peer + " unreachable (" + lastFailure
                    + "); next attempt in " + wait + " ms"));
            return;
        }
        lock.lock();
        try {
            if (!pending.isEmpty() && pendingBytes + p.length > settings.peerOutboundMaxBytes) {
                p.future.completeExceptionally(new IOException("outbound buffer to peer " + peer + " is full ("
                        + pendingBytes + " bytes queued, peerOutboundMaxBytes=" + settings.peerOutboundMaxBytes + ")"));
                return;
            }
            pending.addLast(p);
            pendingBytes += p.length;
            notEmpty.signal();
        } finally {
            lock.unlock();
        }
    }

    private List<PendingFrame> takeSome() throws InterruptedException {
        lock.lock();
        try {
            while (pending.isEmpty() && !closed) {
                if (keepConnected && channel == null) {
                    long wait = backoff.remainingNanos();
                    if (wait <= 0) {
                        return Collections.emptyList();
                    }
                    notEmpty.awaitNanos(wait);
                } else {
                    notEmpty.await();
                }
            }
            List<PendingFrame> out = new ArrayList<>();
            long bytes = 0;
            while (!pending.isEmpty() && out.size() < MAX_COALESCED_FRAMES
                    && (out.isEmpty() || bytes + pending.peekFirst().length <= MAX_COALESCED_BYTES)) {
                PendingFrame p = pending.pollFirst();
                pendingBytes -= p.length;
                bytes += p.length;
                out.add(p);
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    private void writeLoop() {
        try {
            while (!closed) {
                List<PendingFrame> frames = takeSome();
                if (frames.isEmpty()) {
                    if (keepConnected && channel == null && !closed) {
                        try {
                            connect();
                        } catch (IOException e) {
                            LOG.debug("connect-ahead to {} failed: {}", peer, e.toString());
                        }
                    }
                    continue;
                }
                frames.removeIf(p -> p.future.isDone());
                if (frames.isEmpty()) {
                    continue;
                }
                FrameChannel ch;
                try {
                    ch = connect();
                } catch (IOException e) {
                    fail(frames, e);
                    continue;
                }
                List<ByteBuffer> buffers = new ArrayList<>(frames.size() * 4);
                for (PendingFrame p : frames) {
                    buffers.add(Frames.header(p.type, p.correlation, p.length));
                    for (ByteBuffer b : p.body) {
                        buffers.add(b);
                    }
                }
                try {
                    ch.writeAll(buffers.toArray(new ByteBuffer[0]));
                    for (PendingFrame p : frames) {
                        if (p.completeOnWrite) {
                            p.future.complete(null);
                        }
                    }
                } catch (IOException e) {
                    disconnect(ch, e);
                    fail(frames, e);
                }
            }
        } catch (InterruptedException e) {
            // closing
        } finally {
            failAll(new ConnectException("transport stopped"));
        }
    }

    private static void fail(List<PendingFrame> frames, Throwable cause) {
        for (PendingFrame p : frames) {
            p.future.completeExceptionally(cause);
        }
    }

    private FrameChannel connect() throws IOException {
        FrameChannel ch = channel;
        if (ch != null) {
            return ch;
        }
        if (!backoff.mayTry()) {
            throw new ConnectException("peer " + peer + " unreachable (" + lastFailure + ")");
        }
        try {
            ch = dialer.dial();
        } catch (IOException | RuntimeException e) {
            backoff.failed();
            lastFailure = e.toString();
            connectFailures.mark();
            firstAttempt.countDown();
            throw e instanceof IOException ? (IOException) e : new IOException(e);
        }
        backoff.succeeded();
        lastFailure = null;
        channel = ch;
        firstAttempt.countDown();
        if (closed) {
            // close() ran during the connect (a TLS handshake makes that likelier) and did not see this channel
            disconnect(ch, new ConnectException("transport stopped"));
            throw new ConnectException("transport stopped");
        }
        FrameChannel connected = ch;
        Thread t = context.threads("tcp-ack").newThread(() -> readLoop(connected));
        reader = t;
        t.start();
        LOG.debug("connected to {}", peer);
        return ch;
    }

    private void readLoop(FrameChannel ch) {
        Throwable cause = new ConnectException("connection to peer " + peer + " closed");
        try {
            while (true) {
                FrameChannel.Frame f = ch.read();
                if (f == null) {
                    break;
                }
                answers.accept(f);
            }
        } catch (MalformedFrameException e) {
            context.metrics().markMalformedFrame();
            LOG.warn("ehrelay: closing connection to {}: {}", peer, e.getMessage());
            cause = e;
        } catch (SSLException e) {
            // with TLS 1.3 a peer that does not trust this node's certificate says so after the handshake
            WARN.warn("tls:" + peer, "ehrelay: TLS connection to peer {} failed: {}. Both need tls=true, and each the "
                    + "other's certificate in its tlsTrustStore", peer, e.getMessage());
            cause = e;
        } catch (IOException e) {
            cause = e;
        } finally {
            disconnect(ch, cause);
        }
    }

    private void disconnect(FrameChannel ch, Throwable cause) {
        synchronized (this) {
            if (channel == ch) {
                channel = null;
            }
        }
        try {
            ch.close();
        } catch (IOException e) {
            LOG.debug("closing {}: {}", peer, e.toString());
        }
        IOException lost = new IOException("connection to peer " + peer + " lost: " + cause);
        answers.failAll(lost);
    }

    private void failAll(Throwable cause) {
        lock.lock();
        try {
            for (PendingFrame p : pending) {
                p.future.completeExceptionally(cause);
            }
            pending.clear();
            pendingBytes = 0;
        } finally {
            lock.unlock();
        }
        answers.failAll(cause);
    }

    void close() {
        closed = true;
        lock.lock();
        try {
            notEmpty.signalAll();
        } finally {
            lock.unlock();
        }
        FrameChannel ch = channel;
        if (ch != null) {
            disconnect(ch, new ConnectException("transport stopped"));
        }
        writer.interrupt();
        join(writer);
        Thread r = reader;
        if (r != null) {
            join(r);
        }
        failAll(new ConnectException("transport stopped"));
    }

    private static void join(Thread t) {
        try {
            t.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
