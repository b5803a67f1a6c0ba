package io.ehrelay.hessian;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PeerProperties;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.config.TlsConfig;

/** Hessian/HTTP provider settings (token, trust, timeouts, outbound bound). Immutable. */
final class HessianSettings {

    static final String SCHEME = "ehrelay-hessian";
    static final String NAME = "hessian";
    static final String TOKEN_HEADER = "X-Ehrelay-Token";
    /** The header naming a call's session when nodes prove {@code clusterSecret} (base64). */
    static final String SESSION_HEADER = "X-Ehrelay-Session";
    /** The former name of {@link PeerProperties#CALL_TIMEOUT_MILLIS}, accepted until the next minor version. */
    static final String OLD_CALL_TIMEOUT_MILLIS = "readTimeoutMillis";

    final String clusterToken;
    /** The stores of this node's calls: trust for {@code https} peers, and a client certificate. */
    final TlsConfig tls;
    final int connectTimeoutMillis;
    /** How long one HTTP call may wait for its answer (the socket's read timeout). */
    final int callTimeoutMillis;
    final long peerOutboundMaxBytes;
    final long retryMaxMillis;
    /** The bytes of request bodies the listener reads at once, for all callers together. */
    final long inboundBufferMaxBytes;

    private HessianSettings(String clusterToken, TlsConfig tls, int connectTimeoutMillis,
                            int callTimeoutMillis, long peerOutboundMaxBytes, long retryMaxMillis,
                            long inboundBufferMaxBytes) {
        this.inboundBufferMaxBytes = inboundBufferMaxBytes;
        this.clusterToken = clusterToken;
        this.tls = tls;
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.callTimeoutMillis = callTimeoutMillis;
        this.peerOutboundMaxBytes = peerOutboundMaxBytes;
        this.retryMaxMillis = retryMaxMillis;
    }

    static HessianSettings read(PropertyReader r, NodeConfig node) {
        r.alias(OLD_CALL_TIMEOUT_MILLIS, PeerProperties.CALL_TIMEOUT_MILLIS);
        String token = r.string("clusterToken");
        if (token != null && token.length() < 16) {
            throw r.invalid("clusterToken", "(hidden)", "a shared secret of at least 16 characters");
        }
        return new HessianSettings(token, TlsConfig.read(r),
                r.intIn(PeerProperties.CONNECT_TIMEOUT_MILLIS, 2000, 1, 600_000),
                r.intIn(PeerProperties.CALL_TIMEOUT_MILLIS, 30_000, 200, 3_600_000),
                node.peerOutboundMaxBytes(),
                r.longIn(PeerProperties.RETRY_MAX_MILLIS, 5000, 10, 600_000),
                // at least one body of the largest size; by default two (as TCP's receive buffers)
                r.bytesIn("inboundBufferMaxBytes", 2L * node.limits().maxFrameBytes(),
                        node.limits().maxFrameBytes() + 64 * 1024L, 1L << 40));
    }
}
