package io.ehrelay.hessian;

import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.config.TlsConfig;
import io.ehrelay.spi.TransportSettings;

/**
 * The listener's own properties: {@code path}, HTTPS key store, client certificates ({@code tlsTrustStore},
 * {@code tlsClientAuth}), HTTP threads and the bounds on reading requests. Immutable.
 */
final class HessianListenerSettings implements TransportSettings {

    static final String TLS_CLIENT_AUTH = "tlsClientAuth";
    static final String HTTP_THREADS = "httpThreads";
    static final String MAX_HTTP_THREADS = "maxHttpThreads";
    static final String REQUEST_READ_MILLIS = "requestReadMillis";

    static final int DEFAULT_HTTP_THREADS = 4;
    static final int DEFAULT_MAX_HTTP_THREADS = 64;
    static final int DEFAULT_REQUEST_READ_MILLIS = 10_000;

    final String path;
    /** The key store to serve HTTPS with, and the trust store of the client certificates it accepts. */
    final TlsConfig tls;
    /** Whether an HTTPS listener requires a client certificate that {@code tlsTrustStore} trusts. */
    final boolean clientAuth;
    /** Threads kept for requests. */
    final int httpThreads;
    /** The most threads: more than {@link #httpThreads} run only while requests are still arriving. */
    final int maxHttpThreads;
    /** How long a request's headers may take, and the floor of the time its body may take. */
    final int requestReadMillis;

    HessianListenerSettings(String path, TlsConfig tls, boolean clientAuth, int httpThreads, int maxHttpThreads,
                            int requestReadMillis) {
        this.path = path;
        this.tls = tls;
        this.clientAuth = clientAuth;
        this.httpThreads = httpThreads;
        this.maxHttpThreads = maxHttpThreads;
        this.requestReadMillis = requestReadMillis;
    }

    static HessianListenerSettings defaults() {
        return new HessianListenerSettings("/ehrelay", TlsConfig.none(), false, DEFAULT_HTTP_THREADS,
                DEFAULT_MAX_HTTP_THREADS, DEFAULT_REQUEST_READ_MILLIS);
    }

    static HessianListenerSettings read(PropertyReader r) {
        String path = r.string("path", "/ehrelay");
        if (!path.startsWith("/") || path.contains("?") || path.contains("#") || path.contains(" ")) {
            throw r.invalid("path", path, "an absolute URL path such as /ehrelay");
        }
        TlsConfig tls = TlsConfig.read(r);
        boolean https = tls.hasKeyStore();
        String clientAuthGiven = r.string(TLS_CLIENT_AUTH);
        // client certificates are required once the listener is told whom to trust (a key store alone: server TLS)
        boolean clientAuth = r.bool(TLS_CLIENT_AUTH, https && tls.trustStore() != null);
        if (!https && tls.trustStore() != null) {
            throw r.invalid(TlsConfig.TRUST_STORE, tls.trustStore(), "no trust store on a listener without "
                    + "tlsKeyStore: client certificates are checked by an HTTPS listener only (give tlsKeyStore too)");
        }
        if (!https && clientAuthGiven != null) {
            throw r.invalid(TLS_CLIENT_AUTH, clientAuthGiven, "no tlsClientAuth on a listener without tlsKeyStore: "
                    + "client certificates are checked by an HTTPS listener only (give tlsKeyStore too)");
        }
        if (https && clientAuth && tls.trustStore() == null) {
            throw r.invalid(TlsConfig.TRUST_STORE, "", "the certificates of the nodes that call this one "
                    + "(tlsTrustStore, with tlsTrustStorePassword), since an HTTPS listener requires client certificates "
                    + "(tlsClientAuth=true); or leave tlsClientAuth out to serve HTTPS without checking callers' certificates");
        }
        if (https && !clientAuth && tls.trustStore() != null) {
            throw r.invalid(TlsConfig.TRUST_STORE, tls.trustStore(), "no trust store with tlsClientAuth=false: "
                    + "the listener then checks no client certificates");
        }
        int threads = r.intIn(HTTP_THREADS, DEFAULT_HTTP_THREADS, 1, 256);
        int maxThreads = r.intIn(MAX_HTTP_THREADS, Math.max(DEFAULT_MAX_HTTP_THREADS, threads), 1, 1024);
        if (maxThreads < threads) {
            throw r.invalid(MAX_HTTP_THREADS, String.valueOf(maxThreads), "at least httpThreads (" + threads + ")");
        }
        return new HessianListenerSettings(path, tls, clientAuth, threads, maxThreads,
                r.intIn(REQUEST_READ_MILLIS, DEFAULT_REQUEST_READ_MILLIS, 100, 3_600_000));
    }

    boolean https() {
        return tls.hasKeyStore();
    }

    /** Whether callers authenticate with TLS client certificates. */
    boolean tlsAuthenticates() {
        return https() && clientAuth;
    }
}
