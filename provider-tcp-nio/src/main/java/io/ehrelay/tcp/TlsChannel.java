package io.ehrelay.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

import io.ehrelay.spi.Clock;

/**
 * TLS on a TCP connection: a blocking {@link ByteChannel} over an {@link SSLEngine}, on a non-blocking socket whose
 * waits have deadlines ({@link TlsSocket}); {@link #close} from any thread ends them and never blocks. After
 * {@link #handshake}, one reader (this class unwraps) and one writer ({@link TlsWriter} wraps) work at once, each
 * under its own lock; about 150 KiB of buffers per connection. How: docs/tcp.md, "TLS". Thread-safe in
 * that sense: one reader, one writer, {@link #close} from any thread.
 */
final class TlsChannel implements ByteChannel {

    /** No deadline: wait until the peer sends, reads, or the channel is closed. */
    static final long NO_DEADLINE = TlsSocket.NO_DEADLINE;
    /**
     * TLS records each network buffer holds: large frames take one system call per few records. The buffers are on
     * the heap: the JDK's ciphers run about half again as fast on heap buffers as on direct ones.
     */
    static final int RECORDS = 4;

    private final TlsSocket socket;
    private final SSLEngine engine;
    private final TlsWriter writer;
    private final ReentrantLock readLock = new ReentrantLock();
    /** Bytes received and not yet unwrapped (write mode); guarded by {@link #readLock}. */
    private ByteBuffer netIn;
    /** Bytes unwrapped and not yet read (read mode); guarded by {@link #readLock}. */
    private ByteBuffer appIn;
    private boolean inboundDone;
    /** Whether the accepting side looked at the first bytes for plain frames; guarded by {@link #readLock}. */
    private boolean firstBytesSeen;
    /** The peer sent plain frames: it gets no TLS alert. */
    private boolean plainPeer;

    private TlsChannel(SocketChannel channel, SSLEngine engine, Clock clock) throws IOException {
        this.engine = engine;
        int packet = engine.getSession().getPacketBufferSize();
        netIn = ByteBuffer.allocate(RECORDS * packet);
        appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
        appIn.flip();
        this.socket = new TlsSocket(channel, clock, this);
        this.writer = new TlsWriter(engine, socket);
    }

    /** The connecting side of {@code channel} (connected, blocking); the handshake is still to be done. */
    static TlsChannel client(SocketChannel channel, SSLContext context, String host, int port, Clock clock)
            throws IOException {
        SSLEngine engine = context.createSSLEngine(host, port);
        engine.setUseClientMode(true);
        return new TlsChannel(channel, engine, clock);
    }

    /** The accepting side of {@code channel}; the handshake is still to be done. */
    static TlsChannel server(SocketChannel channel, SSLContext context, boolean needClientAuth, Clock clock)
            throws IOException {
        SSLEngine engine = context.createSSLEngine();
        engine.setUseClientMode(false);
        engine.setNeedClientAuth(needClientAuth);
        return new TlsChannel(channel, engine, clock);
    }

    /** Whether this accepting side demands a client certificate. */
    boolean needsClientAuth() {
        return engine.getNeedClientAuth();
    }

    /** The deadline {@code millis} from now, for {@link #read(ByteBuffer, long)}. */
    long deadline(long millis) {
        return socket.deadline(millis);
    }

    /**
     * The TLS handshake, within {@code timeoutMillis}. When it fails, the alert that says why goes to the peer.
     *
     * @throws SSLException           when a certificate is not trusted, a required one is missing, or the peer
     *                                does not speak TLS
     * @throws SocketTimeoutException when it does not finish in time
     * @throws EOFException           when the peer closes the connection before it finishes
     */
    void handshake(long timeoutMillis) throws IOException {
        long deadline = deadline(timeoutMillis);
        readLock.lock();
        writer.lock();
        try {
            engine.beginHandshake();
            HandshakeStatus hs = engine.getHandshakeStatus();
            while (hs != HandshakeStatus.NOT_HANDSHAKING) {
                switch (hs) {
                    case NEED_WRAP:
                        hs = writer.wrapHandshake(deadline);
                        break;
                    case NEED_UNWRAP:
                        hs = unwrapHandshake(deadline);
                        break;
                    case NEED_TASK:
                        runTasks(engine);
                        hs = engine.getHandshakeStatus();
                        break;
                    default: // FINISHED: a TLS 1.3 server may still send its session ticket
                        hs = engine.getHandshakeStatus();
                        break;
                }
            }
            writer.flush(deadline);
        } catch (SSLException e) {
            sendAlert(deadline);
            throw e;
        } finally {
            writer.unlock();
            readLock.unlock();
        }
    }

    private HandshakeStatus unwrapHandshake(long deadline) throws IOException {
        if (!firstBytesSeen && !engine.getUseClientMode()) {
            if (netIn.position() < 2) {
                if (receive(deadline) < 0) {
                    throw new EOFException("connection closed during the TLS handshake");
                }
                return HandshakeStatus.NEED_UNWRAP;
            }
            firstBytesSeen = true;
            // the engine would take the frame magic for an SSLv2 header announcing 27 KB, and wait for them
            if ((netIn.get(0) & 0xff) == Frames.MAGIC >>> 8 && (netIn.get(1) & 0xff) == (Frames.MAGIC & 0xff)) {
                plainPeer = true;
                throw new SSLException("the peer sent plain frames: it does not use TLS (tls=false)");
            }
        }
        SSLEngineResult r = unwrap(appIn, true);
        switch (r.getStatus()) {
            case OK:
                return r.getHandshakeStatus();
            case BUFFER_UNDERFLOW:
                if (receive(deadline) < 0) {
                    throw new EOFException("connection closed during the TLS handshake");
                }
                return HandshakeStatus.NEED_UNWRAP;
            case BUFFER_OVERFLOW:
                growAppIn();
                return HandshakeStatus.NEED_UNWRAP;
            default:
                throw new SSLException("the peer closed the TLS connection during the handshake");
        }
    }

    /** After a failed handshake: sends the engine's alert, if it has one, within a second. */
    private void sendAlert(long deadline) {
        if (plainPeer) {
            return;
        }
        try {
            long second = deadline(1000);
            writer.alert(second - deadline < 0 ? second : deadline);
        } catch (IOException | RuntimeException e) {
            // the connection is given up anyway
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return read(dst, NO_DEADLINE);
    }

    /**
     * Reads what has arrived, waiting for at least one byte until {@code deadline} ({@link #deadline}, or
     * {@link #NO_DEADLINE}); {@code -1} at the end of the stream (the peer's close_notify, or the connection
     * closed).
     *
     * @throws SocketTimeoutException when the deadline passes first
     */
    int read(ByteBuffer dst, long deadline) throws IOException {
        readLock.lock();
        try {
            if (appIn.hasRemaining()) {
                return drain(dst);
            }
            if (inboundDone) {
                return -1;
            }
            int total = 0;
            boolean viaAppIn = false;
            while (dst.hasRemaining()) {
                boolean direct = !viaAppIn && dst.remaining() >= engine.getSession().getApplicationBufferSize();
                SSLEngineResult r = unwrap(direct ? dst : appIn, !direct);
                HandshakeStatus hs = r.getHandshakeStatus();
                if (hs == HandshakeStatus.NEED_TASK) {
                    runTasks(engine);
                    hs = engine.getHandshakeStatus();
                }
                if (hs == HandshakeStatus.NEED_WRAP && r.getStatus() != SSLEngineResult.Status.CLOSED) {
                    writer.answer();
                }
                if (r.bytesConsumed() > 0) {
                    writer.unwrapped();
                }
                switch (r.getStatus()) {
                    case OK:
                        if (!direct && appIn.hasRemaining()) {
                            return total + drain(dst);
                        }
                        total += direct ? r.bytesProduced() : 0;
                        if (total > 0 && netIn.position() == 0) {
                            return total;
                        }
                        break;
                    case BUFFER_UNDERFLOW:
                        if (total > 0) {
                            return total;
                        }
                        if (receive(deadline) < 0) {
                            inboundDone = true;
                            return -1;
                        }
                        break;
                    case BUFFER_OVERFLOW:
                        if (total > 0) {
                            return total;
                        }
                        if (direct) {
                            viaAppIn = true;
                        }
                        if (appIn.capacity() < engine.getSession().getApplicationBufferSize() || !direct) {
                            growAppIn();
                        }
                        break;
                    default: // CLOSED: the peer's close_notify
                        inboundDone = true;
                        return total > 0 ? total : -1;
                }
            }
            return total;
        } finally {
            readLock.unlock();
        }
    }

    /** One unwrap from {@link #netIn} into {@code dst} ({@link #appIn}, in read mode, when {@code intoAppIn}). */
    private SSLEngineResult unwrap(ByteBuffer dst, boolean intoAppIn) throws SSLException {
        netIn.flip();
        if (intoAppIn) {
            appIn.compact();
        }
        try {
            return engine.unwrap(netIn, dst);
        } finally {
            netIn.compact();
            if (intoAppIn) {
                appIn.flip();
            }
        }
    }

    private int drain(ByteBuffer dst) {
        int n = Math.min(appIn.remaining(), dst.remaining());
        if (n == appIn.remaining()) {
            dst.put(appIn);
        } else {
            ByteBuffer part = appIn.duplicate();
            part.limit(part.position() + n);
            dst.put(part);
            appIn.position(appIn.position() + n);
        }
        return n;
    }

    private void growAppIn() {
        int size = Math.max(engine.getSession().getApplicationBufferSize(), appIn.capacity() * 2);
        ByteBuffer bigger = ByteBuffer.allocate(size);
        bigger.put(appIn);
        bigger.flip();
        appIn = bigger;
    }

    /** Reads from the socket into {@link #netIn}, waiting until {@code deadline}; {@code -1} at its end. */
    private int receive(long deadline) throws IOException {
        int packet = engine.getSession().getPacketBufferSize();
        if (netIn.capacity() < packet) {
            ByteBuffer bigger = ByteBuffer.allocate(RECORDS * packet);
            netIn.flip();
            bigger.put(netIn);
            netIn = bigger;
        }
        if (!netIn.hasRemaining()) {
            throw new SSLException("TLS record larger than " + netIn.capacity() + " bytes");
        }
        return socket.read(netIn, deadline);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return (int) write(new ByteBuffer[] {src}, 0, 1);
    }

    /** Writes all of {@code srcs[offset, offset + length)}, blocking until the socket took it. */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        return writer.write(srcs, offset, length);
    }

    static void runTasks(SSLEngine engine) {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run();
        }
    }

    @Override
    public boolean isOpen() {
        return !socket.isClosed();
    }

    /**
     * Sends close_notify when no write is under way and the socket takes it at once (a peer that does not read is
     * not waited for), then closes the socket; ends the waits of the reader and writer. Never blocks.
     */
    @Override
    public void close() throws IOException {
        if (!socket.markClosed()) {
            return;
        }
        writer.closeNotify();
        socket.close();
    }
}
