package io.ehrelay.rmi;

import java.io.IOException;
import java.security.GeneralSecurityException;
import javax.net.ssl.SSLContext;

/**
 * TLS contexts built from the provider's key and trust stores. The client side of RMI runs inside
 * deserialized stubs, which cannot carry a context: they use the context of the last ehrelay RMI node started
 * with {@code tls=true} in this JVM (one TLS configuration per JVM), or the JDK default context.
 */
final class RmiTls {

    private static volatile SSLContext client;

    private RmiTls() {
    }

    static SSLContext build(RmiSettings s) throws IOException, GeneralSecurityException {
        SSLContext context = s.stores.context();
        client = context;
        return context;
    }

    static SSLContext clientContext() throws IOException {
        SSLContext c = client;
        if (c != null) {
            return c;
        }
        try {
            return SSLContext.getDefault();
        } catch (GeneralSecurityException e) {
            throw new IOException("no TLS context: " + e.getMessage(), e);
        }
    }
}
