package io.ehrelay.rmi;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PeerProperties;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.config.TlsConfig;

/** RMI-specific provider settings (TLS, outbound bounds, lookup retry, inbound memory). Immutable. */
final class RmiSettings {

    /** Stock RMI's scheme: ehrelay RMI replaces it, so code that asks the CacheManager for "RMI" finds it. */
    static final String SCHEME = "RMI";
    static final String NAME = "rmi";

    static final String TLS = "tls";
    static final String TLS_CLIENT_AUTH = "tlsClientAuth";
    static final String RETRY_MAX_MILLIS = PeerProperties.RETRY_MAX_MILLIS;
    static final String CALL_TIMEOUT_MILLIS = PeerProperties.CALL_TIMEOUT_MILLIS;
    static final String INBOUND_BUFFER_MAX_BYTES = "inboundBufferMaxBytes";
    /** Former names, accepted until the next minor version (neither is a stock Ehcache property). */
    static final String OLD_RETRY_MAX_MILLIS = "lookupRetryMaxMillis";
    static final String OLD_CALL_TIMEOUT_MILLIS = "clientSocketTimeoutMillis";

    final boolean tls;
    /** The stores; only with {@link #tls}. */
    final TlsConfig stores;
    final boolean clientAuth;
    final long peerOutboundMaxBytes;
    final long retryMaxMillis;
    /** Connect and read timeout of this node's registry lookups. */
    final int callTimeoutMillis;
    /** Most bytes of batches over 64 KiB the relay reads at once, for all callers together. */
    final long inboundBufferMaxBytes;

    private RmiSettings(boolean tls, TlsConfig stores, boolean clientAuth, long peerOutboundMaxBytes,
                        long retryMaxMillis, int callTimeoutMillis, long inboundBufferMaxBytes) {
        this.tls = tls;
        this.stores = stores;
        this.clientAuth = clientAuth;
        this.peerOutboundMaxBytes = peerOutboundMaxBytes;
        this.retryMaxMillis = retryMaxMillis;
        this.callTimeoutMillis = callTimeoutMillis;
        this.inboundBufferMaxBytes = inboundBufferMaxBytes;
    }

    static RmiSettings read(PropertyReader r, NodeConfig node) {
        r.alias(OLD_RETRY_MAX_MILLIS, RETRY_MAX_MILLIS).alias(OLD_CALL_TIMEOUT_MILLIS, CALL_TIMEOUT_MILLIS);
        boolean tls = r.bool(TLS, false);
        TlsConfig stores = TlsConfig.readSwitched(r, tls);
        boolean clientAuth = r.bool(TLS_CLIENT_AUTH, true);
        if (tls && clientAuth) {
            stores.requireTrustStoreForClients(r);
        }
        return new RmiSettings(tls, stores, clientAuth,
                node.peerOutboundMaxBytes(),
                r.longIn(RETRY_MAX_MILLIS, 5000, 10, 600_000),
                r.intIn(CALL_TIMEOUT_MILLIS, 10_000, 200, Integer.MAX_VALUE),
                // at least one batch of the largest size; by default two (as TCP's and Hessian's)
                r.bytesIn(INBOUND_BUFFER_MAX_BYTES, 2L * node.limits().maxFrameBytes(),
                        node.limits().maxFrameBytes() + 64 * 1024L, 1L << 40));
    }
}
