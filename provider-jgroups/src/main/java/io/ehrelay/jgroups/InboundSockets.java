package io.ehrelay.jgroups;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jgroups.util.DefaultSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.engine.RateLimitedLog;
import io.ehrelay.spi.TransportMetrics;

/**
 * The connections a JGroups {@code TCP} transport accepts, bounded per node. JGroups accepts any number of them,
 * before any member check, and allocates each message's array as soon as its length arrives ({@code max_length}
 * bounds one message, not how many connections hold one). This socket factory, given to the transport before it
 * starts, adds two bounds:
 * <ul>
 * <li><b>connections</b>: at most {@code maxInboundConnections} accepted sockets open at once. When all are
 *     taken, the one silent the longest gives its slot up if it has been silent for {@link #idleMillis} (members
 *     send heartbeats every few seconds, so an honest connection is never that silent); otherwise the newcomer is
 *     closed at once. Either way one connection is counted in {@code refusedConnections}.</li>
 * <li><b>messages being read</b>: the stream of each accepted socket is followed as JGroups reads it — the
 *     connection header (cookie, version, address length, the address), then messages (a length, then its
 *     bytes). A message over {@link #CHARGED_ABOVE} takes its share of {@code inboundBufferMaxBytes} for all
 *     connections together <em>before</em> JGroups sees its length (so before it allocates the array), waits up
 *     to {@link #budgetWaitMillis} for room, and gives the share back once all its bytes passed. A message that
 *     gets no room, or whose sender stops for {@link #stallMillis} in its middle, closes its connection (counted
 *     in {@code rejected}); a member reconnects and JGroups retransmits what was lost.</li>
 * </ul>
 * Only for JGroups' blocking {@code TCP} transport without JGroups' own TLS (which puts its own socket factory
 * in place); the caller checks that this factory is the one in use. Thread-safe.
 */
final class InboundSockets extends DefaultSocketFactory {

    /** Messages up to this size are not charged (at most this much per connection, bounded by the connections). */
    static final int CHARGED_ABOVE = 64 * 1024;
    /** How long a message waits for its share before its connection is closed. Tests shorten it. */
    static volatile int budgetWaitMillis = 10_000;
    /** How long a sender may stop in the middle of a charged message. Tests shorten it. */
    static volatile int stallMillis = 30_000;
    /** How long a connection must have been silent to give its slot up to a newcomer. Tests shorten it. */
    static volatile int idleMillis = 60_000;

    /** The connection header JGroups reads first: cookie, version and the address's length (unused by TCP). */
    private static final int FIXED_HEADER = 4 + 2 + 2;

    private static final Logger LOG = LoggerFactory.getLogger(InboundSockets.class);

    private final int max;
    private final InboundBudget budget;
    private final TransportMetrics metrics;
    private final TransportMetrics.Count refused;
    private final String node;
    private final int waitMillis = budgetWaitMillis;
    private final int stall = stallMillis;
    private final int idle = idleMillis;
    private final RateLimitedLog warn = new RateLimitedLog(LOG, 10_000);
    /** The open connections, oldest first; guarded by {@code this}. */
    private final LinkedHashSet<Inbound> open = new LinkedHashSet<>();

    /**
     * @param max     {@code maxInboundConnections}
     * @param budget  {@code inboundBufferMaxBytes}, for all accepted connections together
     * @param metrics where refusals ({@code refusedConnections}, {@code rejected}) are counted
     * @param node    the CacheManager's name, for log lines
     */
    InboundSockets(int max, InboundBudget budget, TransportMetrics metrics, String node) {
        this.max = max;
        this.budget = budget;
        this.metrics = metrics;
        this.refused = metrics.count("refusedConnections");
        this.node = node;
    }

    /** The accepted connections open now (gauge {@code connectionsIn}). */
    synchronized int size() {
        return open.size();
    }

    @Override
    public ServerSocket createServerSocket(String serviceName) throws IOException {
        return new Listening();
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
        List<Inbound> all;
        synchronized (this) {
            all = new ArrayList<>(open);
        }
        for (Inbound s : all) {
            s.closeQuietly();
        }
    }

    /** Gives {@code s}, just accepted, a slot (closing a connection silent for the idle time if need be). */
    private boolean admit(Inbound s) {
        Inbound victim = null;
        long now = System.nanoTime();
        synchronized (this) {
            if (open.size() >= max) {
                for (Inbound c : open) {
                    if (victim == null || c.lastReadNanos < victim.lastReadNanos) {
                        victim = c;
                    }
                }
                if (victim == null || now - victim.lastReadNanos < TimeUnit.MILLISECONDS.toNanos(idle)) {
                    refused.mark();
                    warn.warn("refused", "ehrelay: CacheManager {}: refusing a JGroups connection from {}: "
                            + "maxInboundConnections={} are open, none silent for {} s (counted in "
                            + "refusedConnections)", node, s.getInetAddress(), max, idle / 1000);
                    return false;
                }
                open.remove(victim);
            }
            open.add(s);
        }
        if (victim != null) {
            refused.mark();
            warn.warn("evicted", "ehrelay: CacheManager {}: maxInboundConnections={} reached: closed the JGroups "
                    + "connection from {}, silent for {} s (counted in refusedConnections)", node, max,
                    victim.getInetAddress(), TimeUnit.NANOSECONDS.toSeconds(now - victim.lastReadNanos));
            victim.closeQuietly();
        }
        return true;
    }

    private synchronized void closed(Inbound s) {
        open.remove(s);
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
                if (admit(s)) {
                    return s;
                }
                s.closeQuietly();
            }
        }
    }

    /** An accepted connection: its slot, and the stream that charges its messages. */
    private final class Inbound extends Socket {

        volatile long lastReadNanos = System.nanoTime();
        private Metered in;

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
                closed(this);
                Metered m;
                synchronized (this) {
                    m = in;
                }
                if (m != null) {
                    m.releaseCharge();
                }
            }
        }

        void closeQuietly() {
            try {
                close();
            } catch (IOException e) {
                // closing
            }
        }
    }

    /**
     * Follows what JGroups reads: the header, then messages, each an int length and its bytes. A message over
     * {@link #CHARGED_ABOVE} is charged to the budget before the bytes of its length are handed on.
     */
    private final class Metered extends FilterInputStream {

        private final Inbound socket;
        /** Header bytes still to come. The address's length is only known after its first byte. */
        private int headerLeft = FIXED_HEADER + 1;
        private boolean addressSized;
        /** Bytes of the current message's length read so far (0-3), and the length being assembled. */
        private int lengthBytes;
        private int length;
        /** Bytes of the current message still to come. */
        private long bodyLeft;
        /** The current message's share of the budget; guarded by {@code this}. */
        private long charge;

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
            // JGroups reads the header on its one accepting thread: hand it no byte past the header, so that a
            // message's length (whose charge may wait) is only ever seen on the connection's own thread
            int n = charged() ? readWithin(b, off, len) : in.read(b, off, headerLeft > 0 ? Math.min(len, headerLeft)
                    : len);
            if (n > 0) {
                socket.lastReadNanos = System.nanoTime();
                follow(b, off, n);
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

        /** A read in the middle of a charged message: its sender may stop for at most {@link #stall} ms. */
        private int readWithin(byte[] b, int off, int len) throws IOException {
            int before = socket.getSoTimeout();
            socket.setSoTimeout(stall);
            try {
                return in.read(b, off, len);
            } catch (SocketTimeoutException e) {
                throw refuse("its sender stopped for " + stall / 1000 + " s in the middle of a message of "
                        + length + " bytes");
            } finally {
                if (!socket.isClosed()) {
                    socket.setSoTimeout(before);
                }
            }
        }

        private void follow(byte[] b, int off, int n) throws IOException {
            int i = off;
            int end = off + n;
            while (i < end) {
                if (headerLeft > 0) {
                    int take = Math.min(headerLeft, end - i);
                    headerLeft -= take;
                    i += take;
                    if (headerLeft == 0 && !addressSized) {
                        // IpAddress: a signed length byte (4, 16 or none), the bytes (IPv6: and a scope id), a port
                        addressSized = true;
                        int ip = b[i - 1];
                        headerLeft = (ip == 16 ? 16 + 4 : ip == 4 ? 4 : 0) + 2;
                    }
                    continue;
                }
                if (bodyLeft > 0) {
                    long take = Math.min(bodyLeft, end - i);
                    bodyLeft -= take;
                    i += (int) take;
                    if (bodyLeft == 0) {
                        releaseCharge();
                    }
                    continue;
                }
                length = (length << 8) | (b[i++] & 0xff);
                if (++lengthBytes == 4) {
                    lengthBytes = 0;
                    bodyLeft = Math.max(length, 0);
                    if (length > CHARGED_ABOVE) {
                        take(length);
                    }
                    length = 0;
                    if (bodyLeft == 0) {
                        releaseCharge();
                    }
                }
            }
        }

        /** Takes the share of a message of {@code bytes} before JGroups sees its length, or closes the connection. */
        private void take(int bytes) throws IOException {
            if (bytes > budget.max()) {
                throw refuse("it announced a message of " + bytes + " bytes, more than inboundBufferMaxBytes="
                        + budget.max());
            }
            boolean got;
            try {
                got = budget.reserve(bytes, waitMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                got = false;
            }
            if (!got) {
                throw refuse("no room for a message of " + bytes + " bytes within " + waitMillis
                        + " ms (inboundBufferMaxBytes=" + budget.max() + ", " + budget.used() + " in use)");
            }
            boolean late;
            synchronized (this) {
                late = socket.isClosed();
                if (!late) {
                    charge = bytes;
                }
            }
            if (late) {
                budget.release(bytes); // closed while it waited
                throw new IOException("connection closed");
            }
        }

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

        private IOException refuse(String why) {
            metrics.markRejected();
            warn.warn("message", "ehrelay: CacheManager {}: closed the JGroups connection from {}: {} (counted in "
                    + "rejected)", node, socket.getInetAddress(), why);
            socket.closeQuietly();
            return new IOException("ehrelay closed the connection: " + why);
        }
    }
}
