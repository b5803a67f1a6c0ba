package io.ehrelay.rmi;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.rmi.server.RMIClientSocketFactory;

/**
 * Plain sockets with a connect and read timeout, for this node's own outgoing calls (registry lookups and the
 * calls through the stubs it gets back use the factory inside each stub). Not serialized to peers.
 */
final class TimeoutClientSocketFactory implements RMIClientSocketFactory {

    private final int timeoutMillis;

    TimeoutClientSocketFactory(int timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(host, port), timeoutMillis);
            s.setSoTimeout(timeoutMillis);
            s.setTcpNoDelay(true);
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TimeoutClientSocketFactory && ((TimeoutClientSocketFactory) o).timeoutMillis == timeoutMillis;
    }

    @Override
    public int hashCode() {
        return timeoutMillis;
    }
}
