package io.ehrelay.hessian;

import io.ehrelay.config.PropertyReader;

/** The listener's own properties: {@code path}, HTTPS key store, HTTP threads. Immutable. */
final class HessianListenerSettings {

    final String path;
    final String keyStore;
    final String keyStorePassword;
    final String storeType;
    final int httpThreads;

    HessianListenerSettings(String path, String keyStore, String keyStorePassword, String storeType,
                            int httpThreads) {
        this.path = path;
        this.keyStore = keyStore;
        this.keyStorePassword = keyStorePassword;
        this.storeType = storeType;
        this.httpThreads = httpThreads;
    }

    static HessianListenerSettings defaults() {
        return new HessianListenerSettings("/ehrelay", null, "", "PKCS12", 4);
    }

    static HessianListenerSettings read(PropertyReader r) {
        String path = r.string("path", "/ehrelay");
        if (!path.startsWith("/") || path.contains("?") || path.contains("#") || path.contains(" ")) {
            throw r.invalid("path", path, "an absolute URL path such as /ehrelay");
        }
        String keyStore = r.file("tlsKeyStore", "key store");
        return new HessianListenerSettings(path, keyStore, r.string("tlsKeyStorePassword", ""),
                r.string("tlsStoreType", "PKCS12"), r.intIn("httpThreads", 4, 1, 256));
    }

    boolean https() {
        return keyStore != null;
    }
}
