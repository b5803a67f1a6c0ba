package io.ehrelay.internal.config;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** TLS contexts from key and trust store files, for the transports that offer TLS. */
public final class TlsStores {

    private TlsStores() {
    }

    /**
     * @param keyStore   this node's key and certificate, or {@code null} (a client that presents none)
     * @param trustStore the certificates to trust, or {@code null} for the JDK's default trust
     */
    public static SSLContext context(String keyStore, String keyStorePassword, String trustStore,
                                     String trustStorePassword, String storeType)
            throws IOException, GeneralSecurityException {
        KeyManagerFactory kmf = null;
        if (keyStore != null) {
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(load(keyStore, keyStorePassword, storeType), keyStorePassword.toCharArray());
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trustStore == null ? null : load(trustStore, trustStorePassword, storeType));
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
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
}
