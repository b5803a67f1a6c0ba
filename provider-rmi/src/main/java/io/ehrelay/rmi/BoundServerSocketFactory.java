package io.ehrelay.rmi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.rmi.server.RMIServerSocketFactory;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;

/**
 * Listens on the configured {@code hostName} only (the JDK default listens on every interface), optionally with
 * TLS. Remembers the port of the last socket it opened, so that {@code port=0} can report the port it got.
 * Equal only to itself: RMI shares a listening socket between exports with equal factories, and each node
 * wants its own (a second registry on a shared socket would clash with the first).
 */
final class BoundServerSocketFactory implements RMIServerSocketFactory {

    private final InetAddress address;
    private final SSLContext tls;
    private final boolean clientAuth;
    private volatile int lastPort;
    private final java.util.List<ServerSocket> opened = new java.util.concurrent.CopyOnWriteArrayList<>();

    BoundServerSocketFactory(InetAddress address, SSLContext tls, boolean clientAuth) {
        this.address = address;
        this.tls = tls;
        this.clientAuth = clientAuth;
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        ServerSocket socket;
        if (tls == null) {
            socket = new BufferedSockets.Server();
            socket.bind(new java.net.InetSocketAddress(address, port), 128);
        } else {
            SSLServerSocket ssl = (SSLServerSocket) tls.getServerSocketFactory().createServerSocket(port, 128, address);
            ssl.setNeedClientAuth(clientAuth);
            socket = ssl;
        }
        lastPort = socket.getLocalPort();
        opened.add(socket);
        return socket;
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
