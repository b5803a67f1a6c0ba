package io.ehrelay.rmi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.rmi.server.RMIServerSocketFactory;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

import io.ehrelay.spi.PeerGate;

/**
 * Listens on the configured {@code hostName} only (the JDK default listens on every interface), optionally with
 * TLS. Remembers the port of the last socket it opened, so that {@code port=0} can report the port it got.
 * Equal only to itself: RMI shares a listening socket between exports with equal factories, and each node
 * wants its own (a second registry on a shared socket would clash with the first). With a {@link PeerGate}, an
 * accepted connection from a host it does not admit is closed before RMI reads a byte of it.
 */
final class BoundServerSocketFactory implements RMIServerSocketFactory {

    private final InetAddress address;
    private final SSLContext tls;
    private final boolean clientAuth;
    private final PeerGate gate;
    private volatile int lastPort;
    private final java.util.List<ServerSocket> opened = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** @param gate the hosts admitted without authentication, or {@code null} when peers authenticate (TLS) */
    BoundServerSocketFactory(InetAddress address, SSLContext tls, boolean clientAuth, PeerGate gate) {
        this.gate = gate;
        this.address = address;
        this.tls = tls;
        this.clientAuth = clientAuth;
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        ServerSocket socket;
        if (tls == null) {
            socket = new BufferedSockets.Server(gate);
            socket.bind(new java.net.InetSocketAddress(address, port), 128);
        } else {
            SSLServerSocket ssl = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(port, 128, address);
            ssl.setNeedClientAuth(clientAuth);
            socket = gate == null ? ssl : new Gated(ssl, gate);
        }
        lastPort = socket.getLocalPort();
        opened.add(socket);
        return socket;
    }

    /** A listening socket that closes what its gate refuses; everything else is the wrapped socket's. */
    private static final class Gated extends ServerSocket {
        private final ServerSocket inner;
        private final PeerGate gate;

        Gated(ServerSocket inner, PeerGate gate) throws IOException {
            this.inner = inner;
            this.gate = gate;
        }

        @Override
        public java.net.Socket accept() throws IOException {
            while (true) {
                java.net.Socket s = inner.accept();
                if (gate.admits(s.getInetAddress(), "connection")) {
                    return s;
                }
                s.close();
            }
        }

        @Override public int getLocalPort() { return inner.getLocalPort(); }
        @Override public InetAddress getInetAddress() { return inner.getInetAddress(); }
        @Override public java.net.SocketAddress getLocalSocketAddress() { return inner.getLocalSocketAddress(); }
        @Override public boolean isBound() { return inner.isBound(); }
        @Override public boolean isClosed() { return inner.isClosed(); }
        @Override public void close() throws IOException { inner.close(); }
        @Override public synchronized void setSoTimeout(int timeout) throws java.net.SocketException {
            inner.setSoTimeout(timeout);
        }
        @Override public synchronized int getSoTimeout() throws IOException { return inner.getSoTimeout(); }
        @Override public String toString() { return inner.toString(); }
    }

    int lastPort() {
        return lastPort;
    }

    /**
     * Closes the listening sockets and every connection they accepted (plain ones; with TLS the JDK's sockets
     * are left to RMI): called when the node stopped, after everything was unexported.
     */
    void closeAll() {
        for (ServerSocket s : opened) {
            if (s instanceof BufferedSockets.Server) {
                ((BufferedSockets.Server) s).closeAccepted();
            }
            try {
                s.close();
            } catch (java.io.IOException e) {
                // closing anyway
            }
        }
        opened.clear();
    }
}
