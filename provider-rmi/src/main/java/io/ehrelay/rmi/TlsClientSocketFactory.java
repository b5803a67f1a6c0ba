package io.ehrelay.rmi;

import java.io.IOException;
import java.io.Serializable;
import java.net.Socket;
import java.rmi.server.RMIClientSocketFactory;
import javax.net.ssl.SSLSocket;

/**
 * The client side of an ehrelay node that runs with {@code tls=true}: connects with a timeout, sets the read
 * timeout and TCP_NODELAY, then wraps the socket in TLS with this JVM's ehrelay TLS context
 * ({@link RmiTls#clientContext()}). Travels inside the node's stubs, so only ehrelay nodes can use them.
 */
final class TlsClientSocketFactory implements RMIClientSocketFactory, Serializable {

    private static final long serialVersionUID = 1L;

    private final int timeoutMillis;

    TlsClientSocketFactory(int timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        Socket plain = new TimeoutClientSocketFactory(timeoutMillis).createSocket(host, port);
        try {
            SSLSocket ssl = (SSLSocket) RmiTls.clientContext().getSocketFactory().createSocket(plain, host, port, true);
            ssl.setUseClientMode(true);
            ssl.startHandshake();
            return ssl;
        } catch (IOException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TlsClientSocketFactory && ((TlsClientSocketFactory) o).timeoutMillis == timeoutMillis;
    }

    @Override
    public int hashCode() {
        return timeoutMillis;
    }
}
