package io.ehrelay.rmi;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.SocketException;
import java.rmi.server.RMIServerSocketFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLContext;

import io.ehrelay.spi.PeerGate;

/**
 * Listens on the configured {@code hostName} only (the JDK default listens on every interface), optionally with
 * TLS, and accepts within the node's {@link InboundConnections} (shared by all its listening sockets).
 * Remembers the port of the last socket it opened, so that {@code port=0} can report the port it got.
 * Equal only to itself: RMI shares a listening socket between exports with equal factories, and each node
 * wants its own (a second registry on a shared socket would clash with the first). With a {@link PeerGate}, an
 * accepted connection from a host it does not admit is closed before RMI reads a byte of it.
 */
final class BoundServerSocketFactory implements RMIServerSocketFactory {

    private final InetAddress address;
    private final SSLContext tls;
    private final boolean clientAuth;
    private final PeerGate gate;
    private final InboundConnections connections;
    private final CheckedCalls.Factory checks;
    private volatile int lastPort;
    private final List<ServerSocket> opened = new CopyOnWriteArrayList<>();

    /**
     * @param gate        the hosts admitted without authentication, or {@code null} when peers authenticate
     * @param connections the node's connection slots, shared by every listening socket of the node
     */
    BoundServerSocketFactory(InetAddress address, SSLContext tls, boolean clientAuth, PeerGate gate,
                             InboundConnections connections) {
        this(address, tls, clientAuth, gate, connections, null);
    }

    /** @param checks walks every call a peer sends before RMI reads it ({@code null}: not checked) */
    BoundServerSocketFactory(InetAddress address, SSLContext tls, boolean clientAuth, PeerGate gate,
                             InboundConnections connections, CheckedCalls.Factory checks) {
        this.checks = checks;
        this.gate = gate;
        this.address = address;
        this.tls = tls;
        this.clientAuth = clientAuth;
        this.connections = connections;
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        ServerSocket socket = new BufferedSockets.Server(gate, connections, tls, clientAuth, checks);
        try {
            socket.bind(new InetSocketAddress(address, port), 128);
        } catch (IOException e) {
            socket.close();
            // not a BindException: RMI would call any of those "Port already in use"
            throw new CannotListen(address, port, e);
        }
        lastPort = socket.getLocalPort();
        opened.add(socket);
        return socket;
    }

    /**
     * A listening socket that could not be opened, saying where and why: RMI reports every {@code BindException} as
     * "Port already in use", also when the address is not one of this host's ("Cannot assign requested address").
     */
    static final class CannotListen extends IOException {
        private static final long serialVersionUID = 1L;

        CannotListen(InetAddress address, int port, IOException cause) {
            super("cannot listen on " + address.getHostAddress() + ":" + port + ": " + cause.getMessage()
                    + (isLocal(address) ? "" : " (" + address.getHostAddress() + " is not an address of this host: "
                    + "set the listener's hostName to one of its own)"), cause);
        }

        private static boolean isLocal(InetAddress address) {
            try {
                return address.isAnyLocalAddress() || address.isLoopbackAddress()
                        || NetworkInterface.getByInetAddress(address) != null;
            } catch (SocketException e) {
                return true; // cannot tell: say nothing about it
            }
        }

        /** The {@code CannotListen} among {@code e}'s causes (RMI wraps it in an {@code ExportException}), or e. */
        static Exception in(Exception e) {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof CannotListen) {
                    return (CannotListen) t;
                }
            }
            return e;
        }
    }

    int lastPort() {
        return lastPort;
    }

    /** The ports of the listening sockets this factory opened that are still open. */
    List<Integer> ports() {
        List<Integer> ports = new ArrayList<>();
        for (ServerSocket s : opened) {
            if (!s.isClosed()) {
                ports.add(s.getLocalPort());
            }
        }
        return ports;
    }

    /**
     * Closes the listening sockets and every connection they accepted: called when the node stopped, after
     * everything was unexported.
     */
    void closeAll() {
        for (ServerSocket s : opened) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        opened.clear();
        connections.closeAll();
    }
}
