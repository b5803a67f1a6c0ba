package io.ehrelay.tcp;

import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.PropertyReader;

/** TCP-specific provider settings. Immutable. */
final class TcpSettings {

    static final String SCHEME = "ehrelay-tcp";
    static final String NAME = "tcp";
    static final String CONNECT_TIMEOUT_MILLIS = "connectTimeoutMillis";
    static final String RECONNECT_BACKOFF_MAX_MILLIS = "reconnectBackoffMaxMillis";
    static final String MAX_INBOUND_CONNECTIONS = "maxInboundConnections";
    static final String SOCKET_BUFFER_BYTES = "socketBufferBytes";

    final long connectTimeoutMillis;
    final long reconnectBackoffMaxMillis;
    final long peerOutboundMaxBytes;
    final int maxInboundConnections;
    final int socketBufferBytes;

    TcpSettings(long connectTimeoutMillis, long reconnectBackoffMaxMillis, long peerOutboundMaxBytes,
                int maxInboundConnections, int socketBufferBytes) {
        this.socketBufferBytes = socketBufferBytes;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.reconnectBackoffMaxMillis = reconnectBackoffMaxMillis;
        this.peerOutboundMaxBytes = peerOutboundMaxBytes;
        this.maxInboundConnections = maxInboundConnections;
    }

    static TcpSettings read(PropertyReader r, NodeConfig node) {
        return new TcpSettings(
                r.longIn(CONNECT_TIMEOUT_MILLIS, 2000, 1, 600_000),
                r.longIn(RECONNECT_BACKOFF_MAX_MILLIS, 5000, 10, 600_000),
                node.peerOutboundMaxBytes(),
                r.intIn(MAX_INBOUND_CONNECTIONS, 64, 1, 65_536),
                (int) r.bytesIn(SOCKET_BUFFER_BYTES, 0, 0, 1L << 30));
    }
}
