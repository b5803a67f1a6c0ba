package io.ehrelay.rmi;

import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.spi.TransportSettings;

/**
 * The RMI listener's own properties: the stock {@code remoteObjectPort} and {@code socketTimeoutMillis}, and
 * {@code maxInboundConnections}. Immutable.
 */
final class RmiListenerSettings implements TransportSettings {

    static final String REMOTE_OBJECT_PORT = "remoteObjectPort";
    static final String SOCKET_TIMEOUT_MILLIS = "socketTimeoutMillis";
    static final String MAX_INBOUND_CONNECTIONS = "maxInboundConnections";
    /** The stock default. */
    static final int DEFAULT_SOCKET_TIMEOUT_MILLIS = 120_000;
    /** As the TCP transport's. */
    static final int DEFAULT_MAX_INBOUND_CONNECTIONS = 64;

    final int remoteObjectPort;
    final int socketTimeoutMillis;
    /** Most connections peers may hold open to the node, on all its listening sockets together. */
    final int maxInboundConnections;

    RmiListenerSettings(int remoteObjectPort, int socketTimeoutMillis) {
        this(remoteObjectPort, socketTimeoutMillis, DEFAULT_MAX_INBOUND_CONNECTIONS);
    }

    RmiListenerSettings(int remoteObjectPort, int socketTimeoutMillis, int maxInboundConnections) {
        this.remoteObjectPort = remoteObjectPort;
        this.socketTimeoutMillis = socketTimeoutMillis;
        this.maxInboundConnections = maxInboundConnections;
    }

    static RmiListenerSettings read(PropertyReader r) {
        return new RmiListenerSettings(r.intIn(REMOTE_OBJECT_PORT, 0, 0, 65535),
                r.intIn(SOCKET_TIMEOUT_MILLIS, DEFAULT_SOCKET_TIMEOUT_MILLIS, 200, Integer.MAX_VALUE),
                r.intIn(MAX_INBOUND_CONNECTIONS, DEFAULT_MAX_INBOUND_CONNECTIONS, 1, 65_536));
    }
}
