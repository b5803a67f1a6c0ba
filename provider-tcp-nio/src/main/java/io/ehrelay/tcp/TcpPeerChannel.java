package io.ehrelay.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
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
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP transport's peer channel: this node's sender to one peer (every transport names its per-peer sender
 * {@code <Transport>PeerChannel}; TCP's is not a {@link io.ehrelay.internal.rpc.PeerChannel}, as it streams frames instead
 * of making calls). It is one connection: a writer thread that connects (with exponential backoff after a
 * failure), and writes queued frames with gathering writes; and, while connected, a reader thread for the
 * peer's answers (acknowledgements and state chunks). Outbound memory is bounded by
 * {@code peerOutboundMaxBytes}: past it, and while the peer is unreachable, sends fail at once instead of
 * queueing. With TLS, the TLS handshake follows the connect, bounded by {@code connectTimeoutMillis}. Time (the
 * backoff) is read from the given {@link Clock}. Thread-safe.
 */
final class TcpPeerChannel {

    private static final Logger LOG = LoggerFactory.getLogger(TcpPeerChannel.class);
    private static final RateLimitedLog WARN =
            new RateLimitedLog(LOG, 10_000);
    private static final int MAX_COALESCED_FRAMES = 256;
    private static final long MAX_COALESCED_BYTES = 4L << 20;

    /** A frame waiting to be written. */
    private static final class Pending {
        final Frames.Type type;
        final long correlation;
        final ByteBuffer[] body;
        final int length;
        final CompletableFuture<Void> future;
        final boolean completeOnWrite;

        Pending(Frames.Type type, long correlation, ByteBuffer[] body, int length, CompletableFuture<Void> future,
                boolean completeOnWrite) {
            this.type = type;
            this.correlation = correlation;
            this.body = body;
            this.length = length;
            this.future = future;
            this.completeOnWrite = completeOnWrite;
        }
    }

    /** A state transfer in progress. */
    private static final class Transfer {
        final InboundHandler.ChunkSink sink;
        final CompletableFuture<Void> future;

        Transfer(InboundHandler.ChunkSink sink, CompletableFuture<Void> future) {
            this.sink = sink;
            this.future = future;
        }
    }

    private final Peer peer;
    private final InetSocketAddress address;
    private final TcpSettings settings;
    private final TransportContext context;
    /** TLS for the connection, or {@code null}. */
    private final SSLContext tls;
    private final String localEndpoint;
    private final TransportMetrics.Count connectFailures;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition notEmpty = lock.newCondition();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private long pendingBytes;
    private final Map<Long, CompletableFuture<Void>> awaiting = new ConcurrentHashMap<>();
    private final Map<Long, Transfer> transfers = new ConcurrentHashMap<>();
    private final AtomicLong correlations = new AtomicLong();
    private final Thread writer;
    private volatile FrameChannel channel;
    /** Open until the first connection attempt ended, either way. */
    private final CountDownLatch firstAttempt = new CountDownLatch(1);
    private volatile Thread reader;
    private volatile boolean closed;
    private final Backoff backoff;
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
        this.tls = tls;
        this.backoff = Backoff.upTo(settings.retryMaxMillis, clock);
        this.address = Endpoints.parse(peer.endpoint());
        this.settings = settings;
        this.context = context;
        this.localEndpoint = localEndpoint == null ? "" : localEndpoint;
        this.connectFailures = context.metrics().count(MetricNames.CONNECT_FAILURES);
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
            awaiting.put(corr, f);
            f.whenComplete((v, t) -> awaiting.remove(corr));
        }
        offer(new Pending(acknowledge ? Frames.Type.EVENTS_ACK : Frames.Type.EVENTS, corr,
                new ByteBuffer[] {batch.buffer()}, batch.length(), f, !acknowledge));
        return f;
    }

    CompletableFuture<Void> requestState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        long corr = correlations.incrementAndGet();
        transfers.put(corr, new Transfer(sink, f));
        f.whenComplete((v, t) -> transfers.remove(corr));
        byte[] name = cacheName.getBytes(StandardCharsets.UTF_8);
        ByteBuffer body = ByteBuffer.allocate(4 + name.length).putInt(maxChunkBytes).put(name);
        body.flip();
        offer(new Pending(Frames.Type.STATE_REQUEST, corr, new ByteBuffer[] {body}, body.remaining(), f, false));
        return f;
    }

    private void offer(Pending p) {
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

    private List<Pending> takeSome() throws InterruptedException {
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
            List<Pending> out = new ArrayList<>();
            long bytes = 0;
            while (!pending.isEmpty() && out.size() < MAX_COALESCED_FRAMES
                    && (out.isEmpty() || bytes + pending.peekFirst().length <= MAX_COALESCED_BYTES)) {
                Pending p = pending.pollFirst();
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
                List<Pending> frames = takeSome();
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
                for (Pending p : frames) {
                    buffers.add(Frames.header(p.type, p.correlation, p.length));
                    for (ByteBuffer b : p.body) {
                        buffers.add(b);
                    }
                }
                try {
                    ch.writeAll(buffers.toArray(new ByteBuffer[0]));
                    for (Pending p : frames) {
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

    private static void fail(List<Pending> frames, Throwable cause) {
        for (Pending p : frames) {
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
        SocketChannel sc = SocketChannel.open();
        TlsChannel secured = null;
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

    /** The TLS handshake; a failure names the peer, and is logged (rate-limited): it is a configuration error. */
    private void handshake(TlsChannel secured) throws IOException {
        try {
            secured.handshake(settings.connectTimeoutMillis);
        } catch (SSLException e) {
            WARN.warn("tls:" + peer, "ehrelay: TLS handshake with peer {} failed: {}. Both need tls=true, and each "
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

    private void readLoop(FrameChannel ch) {
        Throwable cause = new ConnectException("connection to peer " + peer + " closed");
        try {
            while (true) {
                FrameChannel.Frame f = ch.read();
                if (f == null) {
                    break;
                }
                long corr = f.header.correlationId();
                switch (f.header.type()) {
                    case ACK: {
                        CompletableFuture<Void> done = awaiting.get(corr);
                        if (done != null) {
                            done.complete(null);
                        }
                        break;
                    }
                    case NACK: {
                        String reason = new String(f.copy(), StandardCharsets.UTF_8);
                        Exception e = new IOException("peer " + peer + " refused: " + reason);
                        CompletableFuture<Void> done = awaiting.get(corr);
                        if (done != null) {
                            done.completeExceptionally(e);
                        }
                        Transfer t = transfers.get(corr);
                        if (t != null) {
                            t.future.completeExceptionally(e);
                        }
                        break;
                    }
                    case STATE_CHUNK: {
                        Transfer t = transfers.get(corr);
                        if (t != null && !t.future.isDone()) {
                            try {
                                t.sink.accept(f.copy());
                            } catch (Exception e) {
                                t.future.completeExceptionally(e);
                            }
                        }
                        break;
                    }
                    case STATE_END: {
                        Transfer t = transfers.get(corr);
                        if (t != null) {
                            t.future.complete(null);
                        }
                        break;
                    }
                    case CHALLENGE:
                        throw new MalformedFrameException("peer " + peer + " requires the cluster secret, which this "
                                + "node does not have: set the same clusterSecret on every node");
                    default:
                        throw new MalformedFrameException("unexpected " + f.header.type() + " frame from " + peer);
                }
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
        awaiting.values().forEach(f -> f.completeExceptionally(lost));
        transfers.values().forEach(t -> t.future.completeExceptionally(lost));
    }

    private void failAll(Throwable cause) {
        lock.lock();
        try {
            for (Pending p : pending) {
                p.future.completeExceptionally(cause);
            }
            pending.clear();
            pendingBytes = 0;
        } finally {
            lock.unlock();
        }
        awaiting.values().forEach(f -> f.completeExceptionally(cause));
        transfers.values().forEach(t -> t.future.completeExceptionally(cause));
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
