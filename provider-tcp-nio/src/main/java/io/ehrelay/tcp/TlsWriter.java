package io.ehrelay.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.locks.ReentrantLock;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

/**
 * The sending half of a {@link TlsChannel}: wraps the application's bytes and the handshake's messages into TLS
 * records and sends them, under a lock of its own, so that the writer never waits for the reader and the reader
 * only ever tries to send ({@link #answer}). Thread-safe in that sense: one writer thread, the reader's answers,
 * and {@link #closeNotify} from any thread.
 */
final class TlsWriter {

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SSLEngine engine;
    private final TlsSocket socket;
    private final ReentrantLock lock = new ReentrantLock();
    /** Bytes wrapped and not yet sent (write mode); guarded by {@link #lock}. */
    private ByteBuffer netOut;
    /** Notified when the reader unwrapped something: a writer may wait for it during a renegotiation. */
    private final Object unwrapped = new Object();

    TlsWriter(SSLEngine engine, TlsSocket socket) {
        this.engine = engine;
        this.socket = socket;
        this.netOut = ByteBuffer.allocate(TlsChannel.RECORDS * engine.getSession().getPacketBufferSize());
    }

    void lock() {
        lock.lock();
    }

    void unlock() {
        lock.unlock();
    }

    /** One handshake message wrapped (and sent, unless the engine has more to wrap); the lock is held. */
    HandshakeStatus wrapHandshake(long deadline) throws IOException {
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

    /** After a failed handshake (the lock held): sends the engine's alert, if it has one, until {@code deadline}. */
    void alert(long deadline) throws IOException {
        engine.closeOutbound();
        netOut.clear();
        for (int i = 0; i < 4 && !engine.isOutboundDone(); i++) {
            if (engine.wrap(EMPTY, netOut).bytesProduced() == 0) {
                break;
            }
        }
        flush(deadline);
    }

    /**
     * Sends the engine's answer to the peer's post-handshake message (a TLS 1.3 KeyUpdate's) without waiting, on
     * the reader's thread: the reader must not wait for the socket (the peer's reader may be waiting for ours),
     * nor for the writer (which may be waiting for the peer's reader). When the writer is busy, or the socket takes
     * only part, the engine or {@link #netOut} keeps the rest, which the writer sends before its next record.
     */
    void answer() throws IOException {
        if (!lock.tryLock()) {
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
                    TlsChannel.runTasks(engine);
                }
            }
            netOut.flip();
            try {
                socket.writeNow(netOut);
            } finally {
                netOut.compact();
            }
        } finally {
            lock.unlock();
        }
    }

    /** The reader unwrapped something: a writer waiting for a renegotiation's answer looks again. */
    void unwrapped() {
        synchronized (unwrapped) {
            unwrapped.notifyAll();
        }
    }

    /** Writes all of {@code srcs[offset, offset + length)}, blocking until the socket took it. */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        lock.lock();
        try {
            long total = 0;
            while (hasRemaining(srcs, offset, length)) {
                SSLEngineResult r = engine.wrap(srcs, offset, length, netOut);
                total += r.bytesConsumed();
                switch (r.getStatus()) {
                    case OK:
                        break;
                    case BUFFER_OVERFLOW:
                        makeRoomOut(TlsSocket.NO_DEADLINE);
                        continue;
                    default:
                        throw new ClosedChannelException();
                }
                HandshakeStatus hs = r.getHandshakeStatus();
                if (hs == HandshakeStatus.NEED_TASK) {
                    TlsChannel.runTasks(engine);
                    hs = engine.getHandshakeStatus();
                }
                if (r.bytesConsumed() == 0 && r.bytesProduced() == 0) {
                    if (hs != HandshakeStatus.NEED_UNWRAP) {
                        throw new SSLException("TLS engine neither wrapped nor asked for anything (" + hs + ")");
                    }
                    // a renegotiation waits for the peer's answer, which the reader unwraps
                    flush(TlsSocket.NO_DEADLINE);
                    awaitUnwrap();
                } else if (netOut.remaining() < engine.getSession().getPacketBufferSize()) {
                    flush(TlsSocket.NO_DEADLINE);
                }
            }
            flush(TlsSocket.NO_DEADLINE);
            return total;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Wraps close_notify after what {@link #netOut} still holds and sends what the socket takes at once, unless a
     * write is under way (or this thread's own, interrupted, which would cut a record short). Never blocks.
     */
    void closeNotify() {
        if (!lock.isHeldByCurrentThread() && lock.tryLock()) {
            try {
                engine.closeOutbound();
                engine.wrap(EMPTY, netOut); // after what netOut still holds, if there is room
                netOut.flip();
                socket.writeNow(netOut);
            } catch (IOException | RuntimeException e) {
                // closing anyway
            } finally {
                lock.unlock();
            }
        }
    }

    /** Sends what {@link #netOut} holds, waiting until {@code deadline}; the lock is held. */
    void flush(long deadline) throws IOException {
        netOut.flip();
        try {
            socket.writeFully(netOut, deadline);
        } finally {
            netOut.compact();
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

    /** Lets the reader answer the peer while the writer waits (the reader takes the lock to do so). */
    private void awaitUnwrap() throws IOException {
        lock.unlock();
        try {
            synchronized (unwrapped) {
                unwrapped.wait(10);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lock.lock();
        }
        socket.checkOpen();
    }

    /** Sends what {@link #netOut} holds, or makes it larger when it is empty and a record does not fit. */
    private void makeRoomOut(long deadline) throws IOException {
        if (netOut.position() > 0) {
            flush(deadline);
        } else {
            netOut = ByteBuffer.allocate(
                    Math.max(TlsChannel.RECORDS * engine.getSession().getPacketBufferSize(), 2 * netOut.capacity()));
        }
    }
}
