package io.ehrelay.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

import io.ehrelay.spi.Clock;

/**
 * TLS on a TCP connection: a blocking {@link ByteChannel} over an {@link SSLEngine}. Underneath, the socket is
 * non-blocking and each direction waits on a selector of its own, so that the handshake and the handshake frames
 * have a deadline, and {@link #close} (from any thread) ends every wait and never blocks. {@link #handshake} runs
 * first, on one thread; then one reader and one writer thread may use the channel at the same time: unwrap and
 * wrap have separate locks, and the answer to a post-handshake message (a TLS 1.3 KeyUpdate) is sent by the reader
 * when the writer is idle, else by the writer before its next record; neither waits for the other. Records are
 * unwrapped straight into the caller's buffer when it has room for one; the network buffers hold a few records
 * each (about 150 KiB per connection in all, whatever the peer sends). Thread-safe in that sense: one reader, one
 * writer, and {@link #close} from any thread.
 */
final class TlsChannel implements ByteChannel {

    /** No deadline: wait until the peer sends, reads, or the channel is closed. */
    static final long NO_DEADLINE = 0;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /**
     * TLS records each network buffer holds: large frames take one system call per few records. The buffers are on
     * the heap: the JDK's ciphers run about half again as fast on heap buffers as on direct ones.
     */
    private static final int RECORDS = 4;

    private final SocketChannel channel;
    private final SSLEngine engine;
    private final Selector readable;
    private final Selector writable;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    /** Bytes received and not yet unwrapped (write mode); guarded by {@link #readLock}. */
    private ByteBuffer netIn;
    /** Bytes unwrapped and not yet read (read mode); guarded by {@link #readLock}. */
    private ByteBuffer appIn;
    private boolean inboundDone;
    /** Whether the accepting side looked at the first bytes for plain frames; guarded by {@link #readLock}. */
    private boolean firstBytesSeen;
    /** The peer sent plain frames: it gets no TLS alert. */
    private boolean plainPeer;
    /** Bytes wrapped and not yet sent (write mode); guarded by {@link #writeLock}. */
    private ByteBuffer netOut;
    /** Notified when the reader unwrapped something: a writer may wait for it during a renegotiation. */
    private final Object unwrapped = new Object();
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The node's clock: the handshake's and reads' deadlines. */
    private final Clock clock;

    private TlsChannel(SocketChannel channel, SSLEngine engine, Clock clock) throws IOException {
        this.clock = clock;
        this.channel = channel;
        this.engine = engine;
        int packet = engine.getSession().getPacketBufferSize();
        netIn = ByteBuffer.allocate(RECORDS * packet);
        netOut = ByteBuffer.allocate(RECORDS * packet);
        appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
        appIn.flip();
        Selector r = null;
        Selector w = null;
        try {
            channel.configureBlocking(false);
            r = Selector.open();
            w = Selector.open();
            channel.register(r, SelectionKey.OP_READ);
            channel.register(w, SelectionKey.OP_WRITE);
        } catch (IOException | RuntimeException e) {
            closeQuietly(r);
            closeQuietly(w);
            throw e;
        }
        readable = r;
        writable = w;
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
        long d = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        return d == NO_DEADLINE ? 1 : d;
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
        writeLock.lock();
        try {
            engine.beginHandshake();
            HandshakeStatus hs = engine.getHandshakeStatus();
            while (hs != HandshakeStatus.NOT_HANDSHAKING) {
                switch (hs) {
                    case NEED_WRAP:
                        hs = wrapHandshake(deadline);
                        break;
                    case NEED_UNWRAP:
                        hs = unwrapHandshake(deadline);
                        break;
                    case NEED_TASK:
                        runTasks();
                        hs = engine.getHandshakeStatus();
                        break;
                    default: // FINISHED: a TLS 1.3 server may still send its session ticket
                        hs = engine.getHandshakeStatus();
                        break;
                }
            }
            flush(deadline);
        } catch (SSLException e) {
            sendAlert(deadline);
            throw e;
        } finally {
            writeLock.unlock();
            readLock.unlock();
        }
    }

    private HandshakeStatus wrapHandshake(long deadline) throws IOException {
        SSLEngineResult r = engine.wrap(EMPTY, netOut);
        switch (r.getStatus()) {
            case OK:
                break;
            case BUFFER_OVERFLOW:
                makeRoomOut(deadline);
                return HandshakeStatus.NEED_WRAP;
            default:
                flush(deadline);
                throw new SSLException("TLS connection closed during the handshake");
        }
        if (r.getHandshakeStatus() != HandshakeStatus.NEED_WRAP) {
            flush(deadline);
        }
        return r.getHandshakeStatus();
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
            engine.closeOutbound();
            netOut.clear();
            for (int i = 0; i < 4 && !engine.isOutboundDone(); i++) {
                if (engine.wrap(EMPTY, netOut).bytesProduced() == 0) {
                    break;
                }
            }
            long second = deadline(1000);
            flush(second - deadline < 0 ? second : deadline);
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
                    runTasks();
                    hs = engine.getHandshakeStatus();
                }
                if (hs == HandshakeStatus.NEED_WRAP && r.getStatus() != SSLEngineResult.Status.CLOSED) {
                    answerHandshake();
                }
                if (r.bytesConsumed() > 0) {
                    synchronized (unwrapped) {
                        unwrapped.notifyAll();
                    }
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
        while (true) {
            int n = channel.read(netIn);
            if (n != 0) {
                return n;
            }
            await(readable, deadline);
        }
    }

    /**
     * Sends the engine's answer to the peer's post-handshake message (a TLS 1.3 KeyUpdate's) without waiting: the
     * reader must not wait for the socket (the peer's reader may be waiting for ours), nor for the writer (which
     * may be waiting for the peer's reader). When the writer is busy, or the socket takes only part, the engine
     * or {@link #netOut} keeps the rest, which the writer sends before its next record.
     */
    private void answerHandshake() throws IOException {
        if (!writeLock.tryLock()) {
            return;
        }
        try {
            while (engine.getHandshakeStatus() == HandshakeStatus.NEED_WRAP
                    && netOut.remaining() >= engine.getSession().getPacketBufferSize()) {
                SSLEngineResult r = engine.wrap(EMPTY, netOut);
                if (r.getStatus() != SSLEngineResult.Status.OK || r.bytesProduced() == 0) {
                    break;
                }
                if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                    runTasks();
                }
            }
            netOut.flip();
            try {
                while (netOut.hasRemaining() && channel.write(netOut) > 0) {
                    // as much as the socket takes now
                }
            } finally {
                netOut.compact();
            }
        } finally {
            writeLock.unlock();
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return (int) write(new ByteBuffer[] {src}, 0, 1);
    }

    /** Writes all of {@code srcs[offset, offset + length)}, blocking until the socket took it. */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        writeLock.lock();
        try {
            long total = 0;
            while (hasRemaining(srcs, offset, length)) {
                SSLEngineResult r = engine.wrap(srcs, offset, length, netOut);
                total += r.bytesConsumed();
                switch (r.getStatus()) {
                    case OK:
                        break;
                    case BUFFER_OVERFLOW:
                        makeRoomOut(NO_DEADLINE);
                        continue;
                    default:
                        throw new ClosedChannelException();
                }
                HandshakeStatus hs = r.getHandshakeStatus();
                if (hs == HandshakeStatus.NEED_TASK) {
                    runTasks();
                    hs = engine.getHandshakeStatus();
                }
                if (r.bytesConsumed() == 0 && r.bytesProduced() == 0) {
                    if (hs != HandshakeStatus.NEED_UNWRAP) {
                        throw new SSLException("TLS engine neither wrapped nor asked for anything (" + hs + ")");
                    }
                    // a renegotiation waits for the peer's answer, which the reader unwraps
                    flush(NO_DEADLINE);
                    awaitUnwrap();
                } else if (netOut.remaining() < engine.getSession().getPacketBufferSize()) {
                    flush(NO_DEADLINE);
                }
            }
            flush(NO_DEADLINE);
            return total;
        } finally {
            writeLock.unlock();
        }
    }

    private static boolean hasRemaining(ByteBuffer[] srcs, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (srcs[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    /** Lets the reader answer the peer while the writer waits (the reader takes the write lock to do so). */
    private void awaitUnwrap() throws IOException {
        writeLock.unlock();
        try {
            synchronized (unwrapped) {
                unwrapped.wait(10);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            writeLock.lock();
        }
        checkOpen();
    }

    /** Sends what {@link #netOut} holds, or makes it larger when it is empty and a record does not fit. */
    private void makeRoomOut(long deadline) throws IOException {
        if (netOut.position() > 0) {
            flush(deadline);
        } else {
            ByteBuffer bigger = ByteBuffer.allocate(
                    Math.max(RECORDS * engine.getSession().getPacketBufferSize(), 2 * netOut.capacity()));
            netOut = bigger;
        }
    }

    private void flush(long deadline) throws IOException {
        netOut.flip();
        try {
            while (netOut.hasRemaining()) {
                if (channel.write(netOut) == 0) {
                    await(writable, deadline);
                }
            }
        } finally {
            netOut.compact();
        }
    }

    /** Waits until the socket is ready, the deadline passes, the channel is closed or the thread interrupted. */
    private void await(Selector selector, long deadline) throws IOException {
        long millis = 0;
        if (deadline != NO_DEADLINE) {
            long left = deadline - clock.nanoTime();
            if (left <= 0) {
                throw new SocketTimeoutException("TLS connection: timed out");
            }
            millis = Math.max(1, TimeUnit.NANOSECONDS.toMillis(left));
        }
        try {
            selector.select(millis);
            selector.selectedKeys().clear();
        } catch (ClosedSelectorException e) {
            throw new AsynchronousCloseException();
        }
        if (Thread.currentThread().isInterrupted()) {
            close();
            throw new ClosedByInterruptException();
        }
        checkOpen();
    }

    private void checkOpen() throws IOException {
        if (closed.get()) {
            throw new AsynchronousCloseException();
        }
    }

    private void runTasks() {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run();
        }
    }

    @Override
    public boolean isOpen() {
        return !closed.get();
    }

    /**
     * Sends close_notify when no write is under way and the socket takes it at once (a peer that does not read is
     * not waited for), then closes the socket; ends the waits of the reader and writer. Never blocks.
     */
    @Override
    public void close() throws IOException {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // not in the middle of this thread's own write (interrupted), which would cut a record short
        if (!writeLock.isHeldByCurrentThread() && writeLock.tryLock()) {
            try {
                engine.closeOutbound();
                engine.wrap(EMPTY, netOut); // after what netOut still holds, if there is room
                netOut.flip();
                channel.write(netOut);
            } catch (IOException | RuntimeException e) {
                // closing anyway
            } finally {
                writeLock.unlock();
            }
        }
        try {
            channel.close();
        } finally {
            closeQuietly(readable);
            closeQuietly(writable);
        }
    }

    private static void closeQuietly(Selector s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // nothing to do
            }
        }
    }
}
