package io.ehrelay.tcp;

import java.io.Closeable;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.ehrelay.spi.Clock;

/**
 * The non-blocking socket under a {@link TlsChannel}: reads and writes that wait until a deadline on the node's
 * clock, each direction on a selector of its own (so that the reader and the writer never wait for each other),
 * and a close, from any thread, that ends every wait. Thread-safe in that sense: one reader, one writer, and
 * {@link #close} from any thread.
 */
final class TlsSocket {

    /** No deadline: wait until the peer sends, reads, or the socket is closed. */
    static final long NO_DEADLINE = 0;

    private final SocketChannel channel;
    private final Selector readable;
    private final Selector writable;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Clock clock;
    /** What a wait interrupted closes (the whole channel, which closes this socket). */
    private final Closeable owner;

    /** Makes {@code channel} (connected) non-blocking; a wait interrupted closes {@code owner}. */
    TlsSocket(SocketChannel channel, Clock clock, Closeable owner) throws IOException {
        this.channel = channel;
        this.clock = clock;
        this.owner = owner;
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

    /** The deadline {@code millis} from now. */
    long deadline(long millis) {
        long d = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        return d == NO_DEADLINE ? 1 : d;
    }

    /** Reads into {@code dst}, waiting until {@code deadline} for at least one byte; {@code -1} at the end. */
    int read(ByteBuffer dst, long deadline) throws IOException {
        while (true) {
            int n = channel.read(dst);
            if (n != 0) {
                return n;
            }
            await(readable, deadline);
        }
    }

    /** Writes all of {@code src}, waiting until {@code deadline} whenever the socket takes nothing. */
    void writeFully(ByteBuffer src, long deadline) throws IOException {
        while (src.hasRemaining()) {
            if (channel.write(src) == 0) {
                await(writable, deadline);
            }
        }
    }

    /** Writes as much of {@code src} as the socket takes now, without waiting. */
    void writeNow(ByteBuffer src) throws IOException {
        while (src.hasRemaining() && channel.write(src) > 0) {
            // as much as the socket takes now
        }
    }

    /** Marks the socket closed; false when it already was. Then {@link #close} ends it. */
    boolean markClosed() {
        return closed.compareAndSet(false, true);
    }

    boolean isClosed() {
        return closed.get();
    }

    /** Throws when the socket was closed (from another thread). */
    void checkOpen() throws IOException {
        if (closed.get()) {
            throw new AsynchronousCloseException();
        }
    }

    /** Closes the socket and the selectors; every wait ends. */
    void close() throws IOException {
        closed.set(true);
        try {
            channel.close();
        } finally {
            closeQuietly(readable);
            closeQuietly(writable);
        }
    }

    /** Waits until the socket is ready, the deadline passes, the socket is closed or the thread interrupted. */
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
            owner.close();
            throw new ClosedByInterruptException();
        }
        checkOpen();
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
