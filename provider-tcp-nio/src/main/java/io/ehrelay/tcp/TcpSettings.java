package io.ehrelay.tcp;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PeerProperties;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.config.TlsConfig;

/** TCP-specific provider settings (connections, bounds, TLS). Immutable. */
final class TcpSettings {

    static final String SCHEME = "ehrelay-tcp";
    static final String NAME = "tcp";
    static final String CONNECT_TIMEOUT_MILLIS = PeerProperties.CONNECT_TIMEOUT_MILLIS;
    static final String RETRY_MAX_MILLIS = PeerProperties.RETRY_MAX_MILLIS;
    /** The former name of {@link #RETRY_MAX_MILLIS}, accepted until the next minor version. */
    static final String OLD_RETRY_MAX_MILLIS = "reconnectBackoffMaxMillis";
    static final String MAX_INBOUND_CONNECTIONS = "maxInboundConnections";
    static final String SOCKET_BUFFER_BYTES = "socketBufferBytes";
    static final String INBOUND_BUFFER_MAX_BYTES = "inboundBufferMaxBytes";
    static final String TLS = "tls";
    static final String TLS_CLIENT_AUTH = "tlsClientAuth";

    final long connectTimeoutMillis;
    final long retryMaxMillis;
    final long peerOutboundMaxBytes;
    final int maxInboundConnections;
    final int socketBufferBytes;
    final long inboundBufferMaxBytes;
    final boolean tls;
    /** The stores; only with {@link #tls}. */
    final TlsConfig stores;
    final boolean clientAuth;

    TcpSettings(long connectTimeoutMillis, long retryMaxMillis, long peerOutboundMaxBytes,
                int maxInboundConnections, int socketBufferBytes) {
        this(connectTimeoutMillis, retryMaxMillis, peerOutboundMaxBytes, maxInboundConnections, socketBufferBytes,
                1L << 30);
    }

    TcpSettings(long connectTimeoutMillis, long retryMaxMillis, long peerOutboundMaxBytes,
                int maxInboundConnections, int socketBufferBytes, long inboundBufferMaxBytes) {
        this(connectTimeoutMillis, retryMaxMillis, peerOutboundMaxBytes, maxInboundConnections, socketBufferBytes,
                inboundBufferMaxBytes, false, TlsConfig.none(), true);
    }

    TcpSettings(long connectTimeoutMillis, long retryMaxMillis, long peerOutboundMaxBytes,
                int maxInboundConnections, int socketBufferBytes, long inboundBufferMaxBytes, boolean tls,
                TlsConfig stores, boolean clientAuth) {
        this.tls = tls;
        this.stores = stores;
        this.clientAuth = clientAuth;
        this.inboundBufferMaxBytes = inboundBufferMaxBytes;
        this.socketBufferBytes = socketBufferBytes;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.retryMaxMillis = retryMaxMillis;
        this.peerOutboundMaxBytes = peerOutboundMaxBytes;
        this.maxInboundConnections = maxInboundConnections;
    }

    static TcpSettings read(PropertyReader r, NodeConfig node) {
        r.alias(OLD_RETRY_MAX_MILLIS, RETRY_MAX_MILLIS);
        long maxFrame = node.limits().maxFrameBytes();
        boolean tls = r.bool(TLS, false);
        TlsConfig stores = TlsConfig.readSwitched(r, tls);
        boolean clientAuth = r.bool(TLS_CLIENT_AUTH, true);
        if (tls && clientAuth) {
            stores.requireTrustStoreForClients(r);
        }
        return new TcpSettings(
                r.longIn(CONNECT_TIMEOUT_MILLIS, 2000, 1, 600_000),
                r.longIn(RETRY_MAX_MILLIS, 5000, 10, 600_000),
                node.peerOutboundMaxBytes(),
                r.intIn(MAX_INBOUND_CONNECTIONS, 64, 1, 65_536),
                (int) r.bytesIn(SOCKET_BUFFER_BYTES, 0, 0, 1L << 30),
                // at least one frame of the largest size; by default two
                r.bytesIn(INBOUND_BUFFER_MAX_BYTES, 2 * maxFrame, maxFrame, 1L << 40),
                tls, stores, clientAuth);
    }
}
