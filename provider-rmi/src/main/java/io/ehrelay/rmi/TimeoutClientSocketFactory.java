package io.ehrelay.rmi;

import java.io.IOException;
import java.io.Serializable;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.rmi.server.RMIClientSocketFactory;

/**
 * Plain sockets with a connect and read timeout and large buffers: for this node's own registry lookups, and
 * inside the stubs of its relay (ehrelay peers only). Serializable, as it travels in those stubs.
 */
final class TimeoutClientSocketFactory implements RMIClientSocketFactory, Serializable {

    private static final long serialVersionUID = 1L;

    private final int timeoutMillis;

    TimeoutClientSocketFactory(int timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket s = new BufferedSockets.BufferedSocket();
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
