package io.ehrelay.rmi;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * Sockets with large stream buffers. RMI reads and writes through 8 KiB buffers, which for batches of a MiB means
 * hundreds of system calls per call; these sockets gather them into {@value #BUFFER_BYTES}-byte reads and writes.
 */
final class BufferedSockets {

    static final int BUFFER_BYTES = 256 * 1024;

    private BufferedSockets() {
    }

    /** A socket whose streams are buffered; connect it (or let a {@link Server} accept into it) as usual. */
    static class BufferedSocket extends Socket {
        private InputStream in;
        private OutputStream out;

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) {
                in = new BufferedInputStream(super.getInputStream(), BUFFER_BYTES);
            }
            return in;
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (out == null) {
                out = new BufferedOutputStream(super.getOutputStream(), BUFFER_BYTES);
            }
            return out;
        }
    }

    /**
     * A server socket that accepts into {@link BufferedSocket}s and remembers them: RMI keeps accepted
     * connections open after the last object on a port was unexported, and a peer reusing one would then hear
     * "no such object" from this node's stopped transport for as long as it keeps the connection busy (e.g. a
     * stock node calling every 100 ms while this CacheManager restarts on the same port).
     */
    static final class Server extends ServerSocket {
        private final java.util.Set<Socket> accepted = java.util.concurrent.ConcurrentHashMap.newKeySet();
        private final io.ehrelay.spi.PeerGate gate;

        /** @param gate closes connections from hosts it does not admit ({@code null}: admits all) */
        Server(io.ehrelay.spi.PeerGate gate) throws IOException {
            super();
            this.gate = gate;
        }

        @Override
        public Socket accept() throws IOException {
            while (true) {
                if (isClosed()) {
                    throw new java.net.SocketException("Socket is closed");
                }
                Socket s = new BufferedSocket() {
                    @Override
                    public synchronized void close() throws IOException {
                        accepted.remove(this);
                        super.close();
                    }
                };
                implAccept(s);
                if (gate != null && !gate.admits(s.getInetAddress(), "connection")) {
                    s.close();
                    continue;
                }
                s.setTcpNoDelay(true);
                accepted.add(s);
                return s;
            }
        }

        /** Closes every connection this socket accepted that is still open. */
        void closeAccepted() {
            for (Socket s : accepted) {
                try {
                    s.close();
                } catch (IOException e) {
                    // closing anyway
                }
            }
            accepted.clear();
        }
    }
}
