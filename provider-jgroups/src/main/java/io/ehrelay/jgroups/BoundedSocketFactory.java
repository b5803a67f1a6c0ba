package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;

import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.InboundSlots;
import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.TransportMetrics;
import org.jgroups.util.DefaultSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The socket factory that bounds what a JGroups {@code TCP} transport accepts, per node: at most
 * {@code maxInboundConnections} connections ({@link InboundSlots}; a connection is in its handshake until JGroups
 * read its header), and each frame read whole, within its share of {@code inboundBufferMaxBytes}, before JGroups
 * parses it ({@link Metered#readFrame}, with {@link FrameReader}). Why and how: docs/jgroups.md, "Connections and
 * frames being read". Only the transport's own listener ({@code jgroups.tcp.server}) of a blocking {@code TCP}
 * transport without JGroups' TLS is bounded; the caller checks that this factory is the one in use. Thread-safe.
 */
final class BoundedSocketFactory extends DefaultSocketFactory {

    /** Payloads up to this size are not charged (at most this much per connection, bounded by the connections). */
    static final int CHARGED_ABOVE = 64 * 1024;
    /** How long a frame waits for its share before its connection is closed. Tests shorten it. */
    static volatile int budgetWaitMillis = 10_000;
    /** How long a sender may stop in the middle of a charged frame. Tests shorten it. */
    static volatile int stallMillis = 30_000;
    /** How long a connection must have been silent to give its slot up to a newcomer. Tests shorten it. */
    static volatile int idleMillis = 60_000;

    private static final Logger LOG = LoggerFactory.getLogger(BoundedSocketFactory.class);

    /** The service name JGroups' TCP transport gives its listening socket (other protocols' stay JGroups'). */
    static final String TRANSPORT_SERVICE = "jgroups.tcp.server";

    /** The accepted connection this thread last read from (JGroups reads each one on a thread of its own). */
    private static final ThreadLocal<Metered> READING = new ThreadLocal<>();

    /** The transport's {@code max_length}: the most one frame may hold (0: no limit but the budget). */
    private final long maxLength;
    private final InboundBudget budget;
    private final TransportMetrics metrics;
    private final int waitMillis = budgetWaitMillis;
    private final int stall = stallMillis;
    private final int idle = idleMillis;
    private final Clock clock;
    private final RateLimitedLog warn;
    private final String node;
    /** Run once, before the first accepted connection is handed to JGroups ({@link #beforeFirstAccept}). */
    private final Object hookLock = new Object();
    private Runnable firstAccept;
    private final InboundSlots<Inbound> slots;

    /**
     * @param max       {@code maxInboundConnections}
     * @param maxLength the transport's {@code max_length} (0: none)
     * @param budget  {@code inboundBufferMaxBytes}, for all accepted connections together
     * @param metrics where refusals ({@code refusedConnections}, {@code rejected}) are counted
     * @param node    the CacheManager's name, for log lines
     * @param clock   the node's clock: stalls, idle connections, how long a read waits for the budget
     */
    BoundedSocketFactory(int max, long maxLength, InboundBudget budget, TransportMetrics metrics, String node,
                   Clock clock) {
        this.clock = clock;
        this.warn = new RateLimitedLog(LOG, 10_000, clock);
        this.node = node;
        this.maxLength = maxLength;
        this.budget = budget;
        this.metrics = metrics;
        this.slots = new InboundSlots<>("JGroups", max, idle, metrics.count(MetricNames.REFUSED_CONNECTIONS), node,
                clock);
    }

    /**
     * {@code hook} runs on JGroups' accepting thread before it gets its first connection: the transport's server
     * exists then, and no frame has been read yet. Until it has run without an exception, no connection is handed
     * to JGroups.
     */
    void beforeFirstAccept(Runnable hook) {
        synchronized (hookLock) {
            this.firstAccept = hook;
        }
    }

    /** Runs the {@link #beforeFirstAccept} hook now, unless it ran already. */
    void firstAcceptNow() {
        synchronized (hookLock) {
            if (firstAccept != null) {
                firstAccept.run();
                firstAccept = null;
            }
        }
    }

    /** Bytes of frames being read or parsed now (gauge {@code inboundBufferBytes}). */
    long budgetUsed() {
        return budget.used();
    }

    /** The accepted connections open now (gauge {@code connectionsIn}). */
    int size() {
        return slots.size();
    }

    @Override
    public ServerSocket createServerSocket(String serviceName) throws IOException {
        return TRANSPORT_SERVICE.equals(serviceName) ? new Listening() : super.createServerSocket(serviceName);
    }

    @Override
    public ServerSocket createServerSocket(String serviceName, int port) throws IOException {
        return createServerSocket(serviceName, port, 50, null);
    }

    @Override
    public ServerSocket createServerSocket(String serviceName, int port, int backlog) throws IOException {
        return createServerSocket(serviceName, port, backlog, null);
    }

    @Override
    public ServerSocket createServerSocket(String serviceName, int port, int backlog, InetAddress bindAddress)
            throws IOException {
        if (!TRANSPORT_SERVICE.equals(serviceName)) {
            return super.createServerSocket(serviceName, port, backlog, bindAddress);
        }
        Listening s = new Listening();
        try {
            s.bind(new InetSocketAddress(bindAddress, port), backlog);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** Closes every accepted connection still open: the node stopped. */
    void closeAll() {
        slots.closeAll();
    }

    /** The transport's listening socket: hands JGroups only connections that got a slot. */
    private final class Listening extends ServerSocket {

        Listening() throws IOException {
            super();
        }

        @Override
        public Socket accept() throws IOException {
            while (true) {
                Inbound s = new Inbound();
                implAccept(s);
                if (slots.admit(s)) {
                    try {
                        firstAcceptNow();
                    } catch (RuntimeException e) {
                        s.closeQuietly();
                        throw e;
                    }
                    return s;
                }
                s.closeQuietly();
            }
        }
    }

    /**
     * An accepted connection: its slot, and the stream that charges its messages. It is in its handshake until
     * JGroups read its connection header (an honest member sends it as soon as it connects).
     */
    private final class Inbound extends Socket implements InboundSlots.Connection {

        private final long acceptedNanos = clock.nanoTime();
        volatile long lastReadNanos = acceptedNanos;
        volatile boolean headerRead;
        private Metered in;

        @Override
        public long acceptedNanos() {
            return acceptedNanos;
        }

        @Override
        public long lastActiveNanos() {
            return lastReadNanos;
        }

        @Override
        public boolean inHandshake() {
            return !headerRead;
        }

        /** A stalled frame ends by its own read time-out ({@link Metered#readWithin}): never closed from here. */
        @Override
        public boolean inFrame() {
            return false;
        }

        @Override
        public String remote() {
            return String.valueOf(getInetAddress());
        }

        @Override
        public void evict() {
            closeQuietly();
        }

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) {
                in = new Metered(super.getInputStream(), this);
            }
            return in;
        }

        @Override
        public void close() throws IOException {
            try {
                super.close();
            } finally {
                slots.closed(this);
                Metered m;
                synchronized (this) {
                    m = in;
                }
                if (m != null) {
                    m.releaseCharge();
                }
            }
        }

        @Override
        public void closeQuietly() {
            try {
                close();
            } catch (IOException e) {
                // closing
            }
        }
    }

    /** The accepted connection being read on this thread, or {@code null} (another transport, or not a reader). */
    static Metered reading() {
        return READING.get();
    }

    /**
     * The stream of an accepted connection: when it was last read from, and the room its frame being read holds.
     */
    final class Metered extends FilterInputStream {

        private final Inbound socket;
        /**
         * Bytes of the connection header still to come (cookie, version, the address's length, then the address:
         * a signed length byte, 4 or 16 bytes (IPv6: and a 4-byte scope id), a port); the address's size is known
         * after its first byte.
         */
        private int headerLeft = 4 + 2 + 2 + 1;
        private boolean addressSized;
        /** The share the frame being read holds, and when it must have arrived; guarded by {@code this}. */
        private long charge;
        private long deadlineNanos;

        Metered(InputStream in, Inbound socket) {
            super(in);
            this.socket = socket;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n <= 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (headerLeft > 0) {
                // JGroups reads the header on its one accepting thread: hand it no byte past the header, so that
                // the connection's own thread reads everything after it here, and is known as its reader
                int n = in.read(b, off, Math.min(len, headerLeft));
                if (n > 0) {
                    socket.lastReadNanos = clock.nanoTime();
                    headerLeft -= n;
                    if (headerLeft == 0 && !addressSized) {
                        addressSized = true;
                        int ip = b[off + n - 1];
                        headerLeft = (ip == 16 ? 16 + 4 : ip == 4 ? 4 : 0) + 2;
                    } else if (headerLeft == 0) {
                        socket.headerRead = true;
                    }
                }
                return n;
            }
            if (READING.get() != this) {
                READING.set(this);
            }
            int n = charged() ? readWithin(b, off, len) : in.read(b, off, len);
            if (n > 0) {
                socket.lastReadNanos = clock.nanoTime();
            }
            return n;
        }

        @Override
        public long skip(long n) throws IOException {
            byte[] scratch = new byte[(int) Math.min(Math.max(n, 0), 8192)];
            int read = read(scratch, 0, scratch.length);
            return Math.max(read, 0);
        }

        @Override
        public boolean markSupported() {
            return false;
        }

        private synchronized boolean charged() {
            return charge > 0;
        }

        /**
         * A read in the middle of a charged frame: its sender may stop for at most {@link #stall} ms, and the
         * whole frame must arrive by its deadline (a sender trickling a byte now and then holds its share no
         * longer).
         */
        private int readWithin(byte[] b, int off, int len) throws IOException {
            long left;
            synchronized (this) {
                left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - clock.nanoTime());
            }
            if (left <= 0) {
                throw refuse("a frame of " + chargeNow() + " bytes did not arrive within its time (30 s + 1 s "
                        + "per MiB)");
            }
            int before = socket.getSoTimeout();
            socket.setSoTimeout((int) Math.max(1, Math.min(stall, left)));
            try {
                return in.read(b, off, len);
            } catch (SocketTimeoutException e) {
                throw refuse("its sender stopped or slowed down in the middle of a frame of " + chargeNow()
                        + " bytes");
            } finally {
                if (!socket.isClosed()) {
                    socket.setSoTimeout(before);
                }
            }
        }

        private synchronized long chargeNow() {
            return charge;
        }

        /**
         * The frame of {@code length} bytes that follows on {@code in} (this connection's stream), read whole:
         * refused when longer than {@code max_length} (else {@code inboundBufferMaxBytes}); over
         * {@link #CHARGED_ABOVE} it first takes its share of {@code inboundBufferMaxBytes} (waiting up to
         * {@link #budgetWaitMillis}), which {@link #releaseCharge()} gives back, and must arrive with its sender
         * never stopping for {@link #stallMillis} and within 30 s plus 1 s per MiB. The frame is the returned
         * array's first {@code length} bytes (an array reused from the node's pool may be longer).
         *
         * @throws IOException (a {@link java.net.SocketException}: JGroups takes it for a closed connection)
         */
        InboundBudget.Borrowed readFrame(DataInput in, int length) throws IOException {
            long limit = maxLength > 0 ? maxLength : budget.max();
            if (length <= 0 || length > limit || length > budget.max()) {
                throw refuse("it sent a frame of " + length + " bytes" + (length <= 0 ? ""
                        : length > limit ? ", more than the transport's max_length (" + limit + ")"
                        : ", more than inboundBufferMaxBytes (" + budget.max() + ")"));
            }
            if (length > CHARGED_ABOVE) {
                charge(length);
            }
            InboundBudget.Borrowed frame = null;
            try {
                frame = budget.borrowForParse(length);
                in.readFully(frame.array(), 0, length);
                return frame;
            } catch (IOException | RuntimeException | Error e) {
                releaseCharge();
                if (frame != null) {
                    frame.giveBack();
                }
                throw e;
            }
        }

        /** The node's {@code inboundBufferMaxBytes}, whose pool frames and the batches copied out of them use. */
        InboundBudget budget() {
            return budget;
        }

        private void charge(int bytes) throws IOException {
            boolean got;
            try {
                got = budget.reserve(bytes, waitMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                got = false;
            }
            if (!got) {
                throw refuse("no room for a frame of " + bytes + " bytes within " + waitMillis
                        + " ms (inboundBufferMaxBytes=" + budget.max() + ", " + budget.used() + " in use)");
            }
            boolean late;
            synchronized (this) {
                late = socket.isClosed();
                if (!late) {
                    charge = bytes;
                    deadlineNanos = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30_000 + (bytes >> 20) * 1000L);
                }
            }
            if (late) {
                budget.release(bytes); // closed while it waited
                throw new SocketException("connection closed");
            }
        }

        /** The frame has been parsed (or failed): its share is free. */
        void releaseCharge() {
            long c;
            synchronized (this) {
                c = charge;
                charge = 0;
            }
            if (c > 0) {
                budget.release(c);
            }
        }

        /** Closes the connection for {@code why}, counted in {@code rejected}; the exception to throw. */
        IOException refuse(String why) {
            metrics.markRejected();
            warn.warn("message", "ehrelay: CacheManager {}: closed the JGroups connection from {}: {} (counted in "
                    + "rejected)", node, socket.getInetAddress(), why);
            socket.closeQuietly();
            return new SocketException("ehrelay closed the connection: " + why);
        }
    }
}
