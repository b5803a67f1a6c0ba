package io.ehrelay.rmi;

import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.PropertyReader;

/** RMI-specific provider settings (TLS, outbound bounds, lookup retry). Immutable. */
final class RmiSettings {

    static final String SCHEME = "ehrelay-rmi";
    static final String NAME = "rmi";

    static final String TLS = "tls";
    static final String TLS_KEY_STORE = "tlsKeyStore";
    static final String TLS_KEY_STORE_PASSWORD = "tlsKeyStorePassword";
    static final String TLS_TRUST_STORE = "tlsTrustStore";
    static final String TLS_TRUST_STORE_PASSWORD = "tlsTrustStorePassword";
    static final String TLS_STORE_TYPE = "tlsStoreType";
    static final String TLS_CLIENT_AUTH = "tlsClientAuth";
    static final String LOOKUP_RETRY_MAX_MILLIS = "lookupRetryMaxMillis";
    static final String CLIENT_SOCKET_TIMEOUT_MILLIS = "clientSocketTimeoutMillis";

    final boolean tls;
    final String keyStore;
    final String keyStorePassword;
    final String trustStore;
    final String trustStorePassword;
    final String storeType;
    final boolean clientAuth;
    final long peerOutboundMaxBytes;
    final long lookupRetryMaxMillis;
    final int clientSocketTimeoutMillis;

    private RmiSettings(boolean tls, String keyStore, String keyStorePassword, String trustStore,
                        String trustStorePassword, String storeType, boolean clientAuth, long peerOutboundMaxBytes,
                        long lookupRetryMaxMillis, int clientSocketTimeoutMillis) {
        this.tls = tls;
        this.keyStore = keyStore;
        this.keyStorePassword = keyStorePassword;
        this.trustStore = trustStore;
        this.trustStorePassword = trustStorePassword;
        this.storeType = storeType;
        this.clientAuth = clientAuth;
        this.peerOutboundMaxBytes = peerOutboundMaxBytes;
        this.lookupRetryMaxMillis = lookupRetryMaxMillis;
        this.clientSocketTimeoutMillis = clientSocketTimeoutMillis;
    }

    static RmiSettings read(PropertyReader r, NodeConfig node) {
        boolean tls = r.bool(TLS, false);
        String keyStore = r.file(TLS_KEY_STORE, "key store");
        String keyStorePassword = r.string(TLS_KEY_STORE_PASSWORD, "");
        String trustStore = r.file(TLS_TRUST_STORE, "key store");
        String trustStorePassword = r.string(TLS_TRUST_STORE_PASSWORD, "");
        String storeType = r.string(TLS_STORE_TYPE, "PKCS12");
        boolean clientAuth = r.bool(TLS_CLIENT_AUTH, true);
        for (String[] store : new String[][] {{TLS_KEY_STORE, keyStore}, {TLS_TRUST_STORE, trustStore}}) {
            if (store[1] != null && !tls) {
                throw r.invalid(store[0], store[1], "no key or trust store unless tls=true");
            }
        }
        if (tls && keyStore == null) {
            throw r.invalid(TLS_KEY_STORE, "", "a key store (this node's certificate) when tls=true");
        }
        return new RmiSettings(tls, keyStore, keyStorePassword, trustStore, trustStorePassword, storeType,
                clientAuth,
                node.peerOutboundMaxBytes(),
                r.longIn(LOOKUP_RETRY_MAX_MILLIS, 5000, 10, 600_000),
                r.intIn(CLIENT_SOCKET_TIMEOUT_MILLIS, 10_000, 200, Integer.MAX_VALUE));
    }
}
