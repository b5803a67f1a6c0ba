package io.ehrelay.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;

import io.ehrelay.internal.DirectBuffers;
import io.ehrelay.internal.InboundBudget;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MalformedFrameException;

/**
 * Reads and writes {@link Frames} on a blocking socket channel, or through {@link TlsChannel} on it. Frames are
 * read into one direct receive buffer per channel, reused from frame to frame (no copy between the socket and the
 * decoder; with TLS, records are decrypted straight into it); it grows with the bytes that actually arrive (from
 * 64 KiB, doubling), so a header announcing a large body costs nothing until the peer really sends it, and never
 * more than {@code maxFrameBytes}; after an unusually large frame it shrinks back. A frame's body is valid until
 * the next {@link #read()}. Not thread-safe: one reader and one writer thread per channel.
 */
final class FrameChannel {

    private static final int INITIAL_BODY = 64 * 1024;
    private static final int KEEP_BODY = 4 << 20;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SocketChannel channel;
    /** TLS on {@link #channel}, or {@code null}: plain frames straight on the socket. */
    private final TlsChannel tls;
    private final int maxFrameBytes;
    private final ByteBuffer header = ByteBuffer.allocateDirect(Frames.HEADER_BYTES);
    private ByteBuffer buffer = ByteBuffer.allocateDirect(INITIAL_BODY);
    /** The node's share for buffers beyond {@link #INITIAL_BODY}, or {@code null} (no shared bound). */
    private final InboundBudget budget;
    private final long budgetWaitMillis;
    /** Bytes of {@link #budget} this channel's buffer holds. */
    private long reserved;
    /** Set by {@link #dispose()}: the buffer is freed, nothing is read any more. */
    private boolean disposed;
    /** When the last bytes arrived, and whether a frame is partly read: for the stall watchdog. */
    private volatile long lastReadNanos;
    private volatile boolean inFrame;
    private final Clock clock;

    /** A received frame; its body is valid until the next read. */
    static final class Frame {
        final Frames.Header header;
        private final ByteBuffer body;

        Frame(Frames.Header header, ByteBuffer body) {
            this.header = header;
            this.body = body;
        }

        /** A fresh view of the body, positioned at 0. */
        ByteBuffer body() {
            return body.duplicate();
        }

        int length() {
            return body.remaining();
        }

        byte[] copy() {
            byte[] out = new byte[body.remaining()];
            body.duplicate().get(out);
            return out;
        }
    }

    FrameChannel(SocketChannel channel, TlsChannel tls, int maxFrameBytes, Clock clock) {
        this(channel, tls, maxFrameBytes, null, 0, clock);
    }

    /**
     * @param tls              TLS on {@code channel} (its handshake done before the first frame), or {@code null}
     * @param budget           the node's bound on receive buffers beyond the first 64 KiB, shared by its inbound
     *                         connections, or {@code null}
     * @param budgetWaitMillis how long a read waits for the budget before giving up the connection
     * @param clock            the node's clock: when bytes last arrived (the stall watchdog's and eviction's reading)
     */
    FrameChannel(SocketChannel channel, TlsChannel tls, int maxFrameBytes, InboundBudget budget,
                 long budgetWaitMillis, Clock clock) {
        this.clock = clock;
        this.lastReadNanos = clock.nanoTime();
        this.channel = channel;
        this.tls = tls;
        this.maxFrameBytes = maxFrameBytes;
        this.budget = budget;
        this.budgetWaitMillis = budgetWaitMillis;
    }

    /** Whether a frame has been started but not finished. */
    boolean inFrame() {
        return inFrame;
    }

    /** When the last bytes arrived, on the node's clock (when the channel was made, before any). */
    long lastReadNanos() {
        return lastReadNanos;
    }

    /** Gives the buffer's share of the budget back (the channel is closed; any thread). */
    synchronized void releaseBudget() {
        if (budget != null && reserved > 0) {
            budget.release(reserved);
            reserved = 0;
        }
    }

    /**
     * Gives the budget back and frees the buffers' memory now (the channel is closed). Only on the thread that reads
     * this channel, once it stopped reading: freed memory must not be touched again.
     */
    void dispose() {
        releaseBudget();
        disposed = true;
        DirectBuffers.free(buffer);
        buffer = EMPTY;
    }

    /** The share of the budget a buffer of {@code capacity} bytes takes: what it holds beyond the first 64 KiB. */
    private static long share(int capacity) {
        return Math.max(0, capacity - INITIAL_BODY);
    }

    /**
     * A buffer of {@code capacity} bytes, its share taken from the budget first (while the buffer it replaces still
     * holds its own: both exist while the bytes are copied).
     */
    private ByteBuffer allocate(int capacity) throws IOException {
        long need = share(capacity);
        if (budget != null && need > 0) {
            boolean got;
            try {
                got = budget.reserve(need, budgetWaitMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted waiting for receive-buffer memory");
            }
            if (!got) {
                throw new IOException("receive buffers of this node's inbound connections hold "
                        + "inboundBufferMaxBytes=" + budget.max() + " bytes: no room for a frame of " + capacity
                        + " bytes within " + budgetWaitMillis + " ms");
            }
            synchronized (this) {
                reserved += need;
            }
        }
        return ByteBuffer.allocateDirect(capacity);
    }

    /** Makes {@code next} the buffer: the old one's memory is freed now and its share given back. */
    private void replace(ByteBuffer next) {
        ByteBuffer old = buffer;
        buffer = next;
        DirectBuffers.free(old);
        if (budget != null) {
            synchronized (this) {
                long give = Math.min(share(old.capacity()), reserved); // less when closed meanwhile
                reserved -= give;
                budget.release(give);
            }
        }
    }

    SocketChannel channel() {
        return channel;
    }

    /** Closes the connection (after TLS's close_notify, when the socket takes it at once). */
    void close() throws IOException {
        if (tls != null) {
            tls.close();
        } else {
            channel.close();
        }
    }

    /** Reads one frame; {@code null} at a clean end of stream between frames. */
    Frame read() throws IOException, MalformedFrameException {
        if (disposed) {
            throw new ClosedChannelException();
        }
        header.clear();
        if (!fill(header, true)) {
            return null;
        }
        header.flip();
        Frames.Header h = Frames.readHeader(header, maxFrameBytes);
        int length = h.bodyLength();
        if (buffer.capacity() > KEEP_BODY && length < KEEP_BODY) {
            replace(ByteBuffer.allocateDirect(INITIAL_BODY));
        }
        inFrame = true;
        ByteBuffer body = buffer;
        body.clear();
        body.limit(Math.min(length, body.capacity()));
        while (body.position() < length) {
            if (!body.hasRemaining()) {
                ByteBuffer bigger = allocate((int) Math.min(length, 2L * body.capacity()));
                body.flip();
                bigger.put(body);
                bigger.limit(Math.min(length, bigger.capacity()));
                body = bigger;
                replace(bigger);
            }
            if ((tls == null ? channel.read(body) : tls.read(body)) < 0) {
                throw new EOFException("connection closed inside a frame body (" + body.position() + " of " + length
                        + " bytes)");
            }
            lastReadNanos = clock.nanoTime();
        }
        inFrame = false;
        body.flip();
        return new Frame(h, body);
    }

    /**
     * Reads one small frame (a handshake's) within {@code timeoutMillis}: through the socket's stream, which
     * honours a read timeout where the channel does not. {@code null} at a clean end of stream.
     *
     * @throws java.net.SocketTimeoutException when the frame does not arrive in time
     * @throws MalformedFrameException when its header is bad or its body longer than {@code maxBody}
     */
    Frame readWithin(int maxBody, int timeoutMillis) throws IOException, MalformedFrameException {
        if (tls != null) {
            return readWithinTls(maxBody, timeoutMillis);
        }
        Socket socket = channel.socket();
        socket.setSoTimeout(timeoutMillis);
        try {
            InputStream in = socket.getInputStream();
            byte[] head = new byte[Frames.HEADER_BYTES];
            int first = in.read(head, 0, head.length);
            if (first < 0) {
                return null;
            }
            readFully(in, head, first);
            Frames.Header h = Frames.readHeader(ByteBuffer.wrap(head), maxFrameBytes);
            if (h.bodyLength() > maxBody) {
                throw new MalformedFrameException(h.type() + " frame of " + h.bodyLength() + " bytes during the "
                        + "handshake (at most " + maxBody + ")");
            }
            byte[] body = new byte[h.bodyLength()];
            readFully(in, body, 0);
            return new Frame(h, ByteBuffer.wrap(body));
        } finally {
            socket.setSoTimeout(0);
        }
    }

    /** {@link #readWithin} over TLS, whose reads take a deadline: the whole frame within {@code timeoutMillis}. */
    private Frame readWithinTls(int maxBody, int timeoutMillis) throws IOException, MalformedFrameException {
        long deadline = tls.deadline(timeoutMillis);
        ByteBuffer head = ByteBuffer.allocate(Frames.HEADER_BYTES);
        if (tls.read(head, deadline) < 0) {
            return null;
        }
        fillWithin(head, deadline);
        head.flip();
        Frames.Header h = Frames.readHeader(head, maxFrameBytes);
        if (h.bodyLength() > maxBody) {
            throw new MalformedFrameException(h.type() + " frame of " + h.bodyLength() + " bytes during the "
                    + "handshake (at most " + maxBody + ")");
        }
        ByteBuffer body = ByteBuffer.allocate(h.bodyLength());
        fillWithin(body, deadline);
        body.flip();
        return new Frame(h, body);
    }

    private void fillWithin(ByteBuffer b, long deadline) throws IOException {
        while (b.hasRemaining()) {
            if (tls.read(b, deadline) < 0) {
                throw new EOFException("connection closed inside a handshake frame");
            }
        }
    }

    private static void readFully(InputStream in, byte[] b, int from) throws IOException {
        for (int at = from; at < b.length; ) {
            int n = in.read(b, at, b.length - at);
            if (n < 0) {
                throw new EOFException("connection closed inside a handshake frame");
            }
            at += n;
        }
    }

    private boolean fill(ByteBuffer b, boolean eofAllowedAtStart) throws IOException {
        while (b.hasRemaining()) {
            int n = tls == null ? channel.read(b) : tls.read(b);
            if (n < 0) {
                if (eofAllowedAtStart && b.position() == 0) {
                    return false;
                }
                throw new EOFException("connection closed inside a frame header");
            }
            lastReadNanos = clock.nanoTime();
            if (b.position() > 0) {
                inFrame = true;
            }
        }
        return true;
    }

    /** Writes a frame with a contiguous body. */
    void write(Frames.Type type, long correlation, byte[] body) throws IOException {
        writeAll(new ByteBuffer[] {Frames.header(type, correlation, body.length), ByteBuffer.wrap(body)});
    }

    /** Writes a frame whose body is {@code body}'s remaining bytes. */
    void write(Frames.Type type, long correlation, ByteBuffer body) throws IOException {
        writeAll(new ByteBuffer[] {Frames.header(type, correlation, body.remaining()), body});
    }

    void writeAll(ByteBuffer[] buffers) throws IOException {
        long left = 0;
        for (ByteBuffer b : buffers) {
            left += b.remaining();
        }
        int first = 0;
        while (left > 0) {
            long n = tls == null ? channel.write(buffers, first, buffers.length - first)
                    : tls.write(buffers, first, buffers.length - first);
            left -= n;
            while (first < buffers.length && !buffers[first].hasRemaining()) {
                first++;
            }
        }
    }
}
