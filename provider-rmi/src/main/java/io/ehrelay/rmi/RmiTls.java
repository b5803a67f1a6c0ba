package io.ehrelay.rmi;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.GeneralSecurityException;
import java.security.KeyStore;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

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
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(load(s.keyStore, s.keyStorePassword, s.storeType), s.keyStorePassword.toCharArray());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(s.trustStore == null ? null : load(s.trustStore, s.trustStorePassword, s.storeType));
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        client = context;
        return context;
    }

    private static KeyStore load(String path, String password, String type) throws IOException,
            GeneralSecurityException {
        KeyStore ks = KeyStore.getInstance(type);
        try (InputStream in = new FileInputStream(path)) {
            ks.load(in, password.toCharArray());
        }
        return ks;
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
