package io.ehrelay.hessian;

import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.PropertyReader;

/** Hessian/HTTP provider settings (token, trust, timeouts, outbound bound). Immutable. */
final class HessianSettings {

    static final String SCHEME = "ehrelay-hessian";
    static final String NAME = "hessian";
    static final String TOKEN_HEADER = "X-Ehrelay-Token";

    final String clusterToken;
    final String trustStore;
    final String trustStorePassword;
    final String keyStore;
    final String keyStorePassword;
    final String storeType;
    final int connectTimeoutMillis;
    final int readTimeoutMillis;
    final long peerOutboundMaxBytes;
    final long retryMaxMillis;

    private HessianSettings(String clusterToken, String trustStore, String trustStorePassword, String keyStore,
                            String keyStorePassword, String storeType, int connectTimeoutMillis,
                            int readTimeoutMillis, long peerOutboundMaxBytes, long retryMaxMillis) {
        this.clusterToken = clusterToken;
        this.trustStore = trustStore;
        this.trustStorePassword = trustStorePassword;
        this.keyStore = keyStore;
        this.keyStorePassword = keyStorePassword;
        this.storeType = storeType;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.readTimeoutMillis = readTimeoutMillis;
        this.peerOutboundMaxBytes = peerOutboundMaxBytes;
        this.retryMaxMillis = retryMaxMillis;
    }

    static HessianSettings read(PropertyReader r, NodeConfig node) {
        String token = r.string("clusterToken");
        if (token != null && token.length() < 16) {
            throw r.invalid("clusterToken", "(hidden)", "a shared secret of at least 16 characters");
        }
        String trustStore = r.file("tlsTrustStore", "key store");
        String keyStore = r.file("tlsKeyStore", "key store");
        return new HessianSettings(token, trustStore, r.string("tlsTrustStorePassword", ""), keyStore,
                r.string("tlsKeyStorePassword", ""), r.string("tlsStoreType", "PKCS12"),
                r.intIn("connectTimeoutMillis", 2000, 1, 600_000),
                r.intIn("readTimeoutMillis", 30_000, 200, 3_600_000),
                node.peerOutboundMaxBytes(),
                r.longIn("retryMaxMillis", 5000, 10, 600_000));
    }
}
