package io.ehrelay.replay;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.rmi.server.RMISocketFactory;

/**
 * The JVM-wide RMI socket factory of a replay JVM that runs stock Ehcache RMI: its listeners bind to 127.0.0.1
 * (stock RMI would otherwise listen on every interface). Stock Ehcache picks it up through
 * {@code RMISocketFactory.getSocketFactory()}. Stubs name 127.0.0.1 ({@code java.rmi.server.hostname}).
 */
final class LoopbackRmiSockets extends RMISocketFactory {

    private LoopbackRmiSockets() {
    }

    static synchronized void install() throws IOException {
        // stubs name the host of this property; stock RMI leaves it to the machine's own address otherwise
        if (System.getProperty("java.rmi.server.hostname") == null) {
            System.setProperty("java.rmi.server.hostname", "127.0.0.1");
        }
        if (!(RMISocketFactory.getSocketFactory() instanceof LoopbackRmiSockets)) {
            RMISocketFactory.setSocketFactory(new LoopbackRmiSockets());
        }
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress(host, port), 10_000);
        return s;
    }

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        return new ServerSocket(port, 128, InetAddress.getLoopbackAddress());
    }
}
