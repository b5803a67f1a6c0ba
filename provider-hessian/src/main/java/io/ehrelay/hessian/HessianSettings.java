package io.ehrelay.hessian;

import io.ehrelay.config.NodeConfig;
import io.ehrelay.config.PropertyReader;
import io.ehrelay.config.TlsSettings;

/** Hessian/HTTP provider settings (token, trust, timeouts, outbound bound). Immutable. */
final class HessianSettings {

    static final String SCHEME = "ehrelay-hessian";
    static final String NAME = "hessian";
    static final String TOKEN_HEADER = "X-Ehrelay-Token";

    final String clusterToken;
    /** The stores of this node's calls: trust for {@code https} peers, and a client certificate. */
    final TlsSettings tls;
    final int connectTimeoutMillis;
    final int readTimeoutMillis;
    final long peerOutboundMaxBytes;
    final long retryMaxMillis;

    private HessianSettings(String clusterToken, TlsSettings tls, int connectTimeoutMillis,
                            int readTimeoutMillis, long peerOutboundMaxBytes, long retryMaxMillis) {
        this.clusterToken = clusterToken;
        this.tls = tls;
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
        return new HessianSettings(token, TlsSettings.read(r),
                r.intIn("connectTimeoutMillis", 2000, 1, 600_000),
                r.intIn("readTimeoutMillis", 30_000, 200, 3_600_000),
                node.peerOutboundMaxBytes(),
                r.longIn("retryMaxMillis", 5000, 10, 600_000));
    }
}
