package io.ehrelay.hessian;

import io.ehrelay.spi.TransportSettings;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.config.TlsSettings;

/** The listener's own properties: {@code path}, HTTPS key store, HTTP threads. Immutable. */
final class HessianListenerSettings implements TransportSettings {

    final String path;
    /** The key store to serve HTTPS with (no trust store: the server checks no client certificates). */
    final TlsSettings tls;
    final int httpThreads;

    HessianListenerSettings(String path, TlsSettings tls, int httpThreads) {
        this.path = path;
        this.tls = tls;
        this.httpThreads = httpThreads;
    }

    static HessianListenerSettings defaults() {
        return new HessianListenerSettings("/ehrelay", TlsSettings.none(), 4);
    }

    static HessianListenerSettings read(PropertyReader r) {
        String path = r.string("path", "/ehrelay");
        if (!path.startsWith("/") || path.contains("?") || path.contains("#") || path.contains(" ")) {
            throw r.invalid("path", path, "an absolute URL path such as /ehrelay");
        }
        return new HessianListenerSettings(path, TlsSettings.readKeyStore(r), r.intIn("httpThreads", 4, 1, 256));
    }

    boolean https() {
        return tls.hasKeyStore();
    }
}
