package io.ehrelay.rmi;

import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.PropertyReader;
import io.ehrelay.config.TlsSettings;

/** RMI-specific provider settings (TLS, outbound bounds, lookup retry). Immutable. */
final class RmiSettings {

    static final String SCHEME = "ehrelay-rmi";
    static final String NAME = "rmi";

    static final String TLS = "tls";
    static final String TLS_CLIENT_AUTH = "tlsClientAuth";
    static final String LOOKUP_RETRY_MAX_MILLIS = "lookupRetryMaxMillis";
    static final String CLIENT_SOCKET_TIMEOUT_MILLIS = "clientSocketTimeoutMillis";

    final boolean tls;
    /** The stores; only with {@link #tls}. */
    final TlsSettings stores;
    final boolean clientAuth;
    final long peerOutboundMaxBytes;
    final long lookupRetryMaxMillis;
    final int clientSocketTimeoutMillis;

    private RmiSettings(boolean tls, TlsSettings stores, boolean clientAuth, long peerOutboundMaxBytes,
                        long lookupRetryMaxMillis, int clientSocketTimeoutMillis) {
        this.tls = tls;
        this.stores = stores;
        this.clientAuth = clientAuth;
        this.peerOutboundMaxBytes = peerOutboundMaxBytes;
        this.lookupRetryMaxMillis = lookupRetryMaxMillis;
        this.clientSocketTimeoutMillis = clientSocketTimeoutMillis;
    }

    static RmiSettings read(PropertyReader r, NodeConfig node) {
        boolean tls = r.bool(TLS, false);
        TlsSettings stores = TlsSettings.read(r);
        boolean clientAuth = r.bool(TLS_CLIENT_AUTH, true);
        if (!tls && stores.keyStore() != null) {
            throw r.invalid(TlsSettings.KEY_STORE, stores.keyStore(), "no key or trust store unless tls=true");
        }
        if (!tls && stores.trustStore() != null) {
            throw r.invalid(TlsSettings.TRUST_STORE, stores.trustStore(), "no key or trust store unless tls=true");
        }
        if (tls && !stores.hasKeyStore()) {
            throw r.invalid(TlsSettings.KEY_STORE, "", "a key store (this node's certificate) when tls=true");
        }
        return new RmiSettings(tls, stores, clientAuth,
                node.peerOutboundMaxBytes(),
                r.longIn(LOOKUP_RETRY_MAX_MILLIS, 5000, 10, 600_000),
                r.intIn(CLIENT_SOCKET_TIMEOUT_MILLIS, 10_000, 200, Integer.MAX_VALUE));
    }
}
