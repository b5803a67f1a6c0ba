package io.ehrelay.rmi;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

import io.ehrelay.internal.InboundSlots;
import io.ehrelay.spi.PeerGate;

/**
 * Sockets whose streams buffer little while a connection is quiet and much while it carries a large call. RMI
 * reads and writes through 8 KiB buffers, which for batches of a MiB means hundreds of system calls per call;
 * these streams gather them into reads and writes of up to {@value #LARGE_BYTES} bytes, in a buffer borrowed
 * for as long as the data flows ({@link Pool}). A connection that waits for its next call holds at most
 * {@value #SMALL_BYTES} bytes per direction, so idle connections cost little heap.
 */
final class BufferedSockets {

    /** The buffer of each direction while a connection carries small calls or none (allocated on first use). */
    static final int SMALL_BYTES = 8 * 1024;
    /** The buffer of each direction while a connection carries a large call. */
    static final int LARGE_BYTES = 256 * 1024;

    static final Activity NONE = new Activity() {
        @Override
        public void beforeRead() {
        }

        @Override
        public void afterRead(int n) {
        }

        @Override
        public void afterWrite() {
        }

        @Override
        public void failed() {
        }
    };

    private BufferedSockets() {
    }

    /**
     * The large buffers, lent to a stream while data flows through it and given back when it waits (an input
     * stream drained with nothing more on the socket, an output stream flushed). At most {@value #RETAINED}
     * idle ones are kept for reuse in this JVM ({@value #RETAINED} × 256 KiB); beyond that they are left to the
     * collector. A stream that is closed while it holds one leaves it to the collector too, as another thread
     * may still be inside it.
     */
    static final class Pool {
        static final int RETAINED = 16;
        private static final ArrayBlockingQueue<byte[]> FREE = new ArrayBlockingQueue<>(RETAINED);

        private Pool() {
        }

        static byte[] take() {
            byte[] b = FREE.poll();
            return b != null ? b : new byte[LARGE_BYTES];
        }

        static void give(byte[] b) {
            FREE.offer(b);
        }
    }

    /** What a socket learns from its streams: the inbound side enforces its timeouts and tracks silence here. */
    interface Activity {
        /** Before each read from the socket (may set its read timeout, or refuse to read at all). */
        void beforeRead() throws IOException;

        /** After a read from the socket that returned {@code n} bytes (or -1). */
        void afterRead(int n);

        /** After bytes were written to the socket. */
        void afterWrite();

        /** A read from or write to the socket failed (e.g. as the socket was closed under it). */
        void failed();
    }

    static int held(byte[] small, byte[] large, byte[] buf) {
        int n = (small == null ? 0 : small.length) + (large == null ? 0 : large.length);
        return buf != null && buf != small && buf != large ? n + buf.length : n;
    }

    /** A socket whose streams are buffered; connect it (or let a {@link Server} accept into it) as usual. */
    static class BufferedSocket extends Socket {
        private InputStream in;
        private OutputStream out;

        /** What the streams report to; none for outbound sockets. */
        Activity activity() {
            return NONE;
        }

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) {
                in = new AdaptiveInput(super.getInputStream(), activity());
            }
            return in;
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (out == null) {
                out = new AdaptiveOutput(super.getOutputStream(), activity());
            }
            return out;
        }

        public void closeQuietly() {
            try {
                close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /**
     * A connection a peer opened to this node, holding one of the node's {@link InboundConnections} slots until
     * it is closed. Until its handshake is done (plain: RMI read a valid JRMP header and asked for the output
     * stream; TLS: the TLS handshake completed) every read waits at most until {@link InboundConnections}'
     * handshake deadline; afterwards at most its idle timeout. The read timeout RMI sets (2 hours unless
     * {@code sun.rmi.transport.tcp.readTimeout} says otherwise) is clamped to these, so RMI's own read of the
     * next call times out on a silent connection, and RMI closes it.
     */
    static final class InboundSocket extends BufferedSocket implements Activity, InboundSlots.Connection {
        private final InboundConnections slots;
        private final boolean tls;
        private final AtomicInteger closes = new AtomicInteger();
        /**
         * Counted down when RMI's thread lets go of the connection after this node closed it to free its slot: its
         * read or write fails, or it closes the connection too.
         */
        private final CountDownLatch finished = new CountDownLatch(1);
        private volatile long acceptedNanos;
        private volatile long lastActiveNanos;
        private volatile boolean established;
        /** The read timeout RMI (or the TLS layer) asked for; 0 = none. */
        private volatile int requestedTimeout;
        /** The read timeout set on the socket now; -1 = not set yet. */
        private volatile int appliedTimeout = -1;

        /** Walks each call a peer sends before RMI reads it ({@code null}: not checked; TLS: checked above TLS). */
        private final CheckedCalls.Factory checks;
        private CheckedCalls checked;

        InboundSocket(InboundConnections slots, boolean tls) {
            this(slots, tls, null);
        }

        InboundSocket(InboundConnections slots, boolean tls, CheckedCalls.Factory checks) {
            this.slots = slots;
            this.acceptedNanos = slots.clock().nanoTime();
            this.lastActiveNanos = acceptedNanos;
            this.tls = tls;
            this.checks = checks;
        }

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            InputStream plain = super.getInputStream();
            if (tls || checks == null) {
                return plain;
            }
            if (checked == null) {
                checked = checks.open(plain, getInetAddress());
            }
            return checked;
        }

        @Override
        Activity activity() {
            return this;
        }

        /** Called once the connection was accepted: its handshake time starts now. */
        void accepted() {
            long now = slots.clock().nanoTime();
            acceptedNanos = now;
            lastActiveNanos = now;
        }

        /** The handshake is done: from now on, the idle timeout applies. */
        void established() {
            established = true;
        }

        @Override
        public boolean inHandshake() {
            return !established;
        }

        @Override
        public long acceptedNanos() {
            return acceptedNanos;
        }

        /** When something was last read from or written to this connection. */
        @Override
        public long lastActiveNanos() {
            return lastActiveNanos;
        }

        /** RMI's own reads time out on a stalled call ({@link #beforeRead}): never closed as stalled. */
        @Override
        public boolean inFrame() {
            return false;
        }

        @Override
        public String remote() {
            return String.valueOf(getInetAddress());
        }

        /** Closes it, then waits a little for RMI's thread of it to take the newcomer: threads stay bounded. */
        @Override
        public void evict() {
            closeQuietly();
            awaitRmiDone(InboundConnections.EVICTION_WAIT_MILLIS);
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (!tls) {
                // RMI asks for it once the client's JRMP magic and version were read and valid
                established = true;
            }
            return super.getOutputStream();
        }

        @Override
        public void setSoTimeout(int timeout) throws SocketException {
            requestedTimeout = Math.max(0, timeout);
            applyTimeout(requestedTimeout == 0 ? slots.idleMillis() : Math.min(requestedTimeout, slots.idleMillis()));
        }

        private void applyTimeout(int timeout) throws SocketException {
            if (timeout != appliedTimeout) {
                super.setSoTimeout(timeout);
                appliedTimeout = timeout;
            }
        }

        @Override
        public void beforeRead() throws IOException {
            int limit;
            if (established) {
                limit = slots.idleMillis();
            } else {
                long left = acceptedNanos + TimeUnit.MILLISECONDS.toNanos(slots.handshakeMillis()) - slots.clock().nanoTime();
                if (left <= 0) {
                    throw new SocketTimeoutException("ehrelay: no RMI handshake within " + slots.handshakeMillis()
                            + " ms");
                }
                limit = (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(left) + 1);
            }
            int requested = requestedTimeout;
            applyTimeout(requested == 0 ? limit : Math.min(requested, limit));
        }

        @Override
        public void afterRead(int n) {
            if (n > 0) {
                lastActiveNanos = slots.clock().nanoTime();
            }
        }

        @Override
        public void afterWrite() {
            lastActiveNanos = slots.clock().nanoTime();
        }

        @Override
        public void failed() {
            if (closes.get() > 0) {
                finished.countDown(); // RMI's thread woke up to the close and is giving the connection up
            }
        }

        @Override
        public void close() throws IOException {
            try {
                super.close();
            } finally {
                if (closes.incrementAndGet() == 1) {
                    slots.closed(this);
                } else {
                    finished.countDown();
                }
            }
        }

        /**
         * Waits at most {@code millis} for RMI's thread to let go of this connection, which this node closed: it is
         * then free for the next connection.
         */
        void awaitRmiDone(long millis) {
            try {
                finished.await(millis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public String toString() {
            return "connection from " + getInetAddress() + ":" + getPort();
        }
    }

    /**
     * A server socket that accepts into {@link InboundSocket}s within the node's {@link InboundConnections}: a
     * connection the bound refuses (or that a peer gate refuses) is closed before RMI sees it, so it costs RMI
     * no thread, and this loop goes on to the next one. With TLS, the accepted socket is wrapped in a
     * server-mode TLS socket layered over it (its handshake runs on RMI's connection thread, within the
     * handshake deadline). The node closes every connection still open when it stops: RMI keeps accepted
     * connections open after the last object on a port was unexported, and a peer reusing one would then hear
     * "no such object" from this node's stopped transport for as long as it keeps the connection busy (e.g. a
     * stock node calling every 100 ms while this CacheManager restarts on the same port).
     */
    static final class Server extends ServerSocket {
        private final PeerGate gate;
        private final InboundConnections connections;
        private final SSLContext tls;
        private final boolean clientAuth;
        private final CheckedCalls.Factory checks;

        /**
         * @param gate        closes connections from hosts it does not admit ({@code null}: admits all)
         * @param connections the node's connection slots
         * @param tls         the TLS context, or {@code null} for plain connections
         * @param checks      walks every call before RMI reads it ({@code null}: not checked)
         */
        Server(PeerGate gate, InboundConnections connections, SSLContext tls, boolean clientAuth,
               CheckedCalls.Factory checks) throws IOException {
            super();
            this.gate = gate;
            this.connections = connections;
            this.tls = tls;
            this.clientAuth = clientAuth;
            this.checks = checks;
        }

        @Override
        public Socket accept() throws IOException {
            while (true) {
                if (isClosed()) {
                    throw new SocketException("Socket is closed");
                }
                InboundSocket s = new InboundSocket(connections, tls != null, checks);
                implAccept(s);
                if (gate != null && !gate.admits(s.getInetAddress(), "connection")) {
                    s.closeQuietly();
                    continue;
                }
                s.accepted();
                if (!connections.admit(s)) {
                    s.closeQuietly();
                    continue;
                }
                try {
                    s.setTcpNoDelay(true);
                    if (tls == null) {
                        return s;
                    }
                    Socket secure = layerTls(s);
                    return checks == null ? secure : new CheckedTlsSocket((SSLSocket) secure, checks);
                } catch (IOException | RuntimeException e) {
                    s.closeQuietly();
                }
            }
        }

        private Socket layerTls(InboundSocket plain) throws IOException {
            SSLSocket ssl = (SSLSocket) tls.getSocketFactory().createSocket(plain, null, true);
            ssl.setUseClientMode(false);
            ssl.setNeedClientAuth(clientAuth);
            ssl.addHandshakeCompletedListener(e -> plain.established());
            return ssl;
        }
    }
}
