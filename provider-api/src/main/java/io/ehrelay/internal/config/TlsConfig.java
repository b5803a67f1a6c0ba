package io.ehrelay.internal.config;

import java.io.IOException;
import java.security.GeneralSecurityException;
import javax.net.ssl.SSLContext;

/**
 * The TLS key and trust stores of a factory, read from the same property names by every transport that offers
 * TLS: {@code tlsKeyStore}, {@code tlsKeyStorePassword}, {@code tlsTrustStore}, {@code tlsTrustStorePassword},
 * {@code tlsStoreType} (default {@code PKCS12}). Whether TLS is on, and what a missing store means, is the
 * transport's to decide. Immutable.
 */
public final class TlsConfig {

    public static final String KEY_STORE = "tlsKeyStore";
    public static final String KEY_STORE_PASSWORD = "tlsKeyStorePassword";
    public static final String TRUST_STORE = "tlsTrustStore";
    public static final String TRUST_STORE_PASSWORD = "tlsTrustStorePassword";
    public static final String STORE_TYPE = "tlsStoreType";
    public static final String DEFAULT_STORE_TYPE = "PKCS12";

    private static final TlsConfig NONE = new TlsConfig(null, "", null, "", DEFAULT_STORE_TYPE);

    private final String keyStore;
    private final String keyStorePassword;
    private final String trustStore;
    private final String trustStorePassword;
    private final String storeType;

    private TlsConfig(String keyStore, String keyStorePassword, String trustStore, String trustStorePassword,
                        String storeType) {
        this.keyStore = keyStore;
        this.keyStorePassword = keyStorePassword;
        this.trustStore = trustStore;
        this.trustStorePassword = trustStorePassword;
        this.storeType = storeType;
    }

    /** No stores: the JDK's default trust, no key. */
    public static TlsConfig none() {
        return NONE;
    }

    /** All five properties; a store named must be a readable file. */
    public static TlsConfig read(PropertyReader r) {
        String keyStore = r.file(KEY_STORE, "key store");
        String keyStorePassword = r.string(KEY_STORE_PASSWORD, "");
        String trustStore = r.file(TRUST_STORE, "key store");
        return new TlsConfig(keyStore, keyStorePassword, trustStore, r.string(TRUST_STORE_PASSWORD, ""),
                r.string(STORE_TYPE, DEFAULT_STORE_TYPE));
    }

    /**
     * The five properties of a transport that turns TLS on with its own switch ({@code tls=true}: RMI, TCP):
     * stores only with it, and then a key store (this node's certificate).
     */
    public static TlsConfig readSwitched(PropertyReader r, boolean tls) {
        TlsConfig stores = read(r);
        if (!tls && stores.keyStore() != null) {
            throw r.invalid(KEY_STORE, stores.keyStore(), "no key or trust store unless tls=true");
        }
        if (!tls && stores.trustStore() != null) {
            throw r.invalid(TRUST_STORE, stores.trustStore(), "no key or trust store unless tls=true");
        }
        if (tls && !stores.hasKeyStore()) {
            throw r.invalid(KEY_STORE, "", "a key store (this node's certificate) when tls=true");
        }
        return stores;
    }

    /**
     * Refuses client certificates checked against the JDK's default trust: that would take any certificate a
     * public CA signed for a cluster member. Call when the transport serves TLS and requires client certificates.
     */
    public TlsConfig requireTrustStoreForClients(PropertyReader r) {
        if (trustStore == null) {
            throw r.invalid(TRUST_STORE, "", "the certificates of the cluster's nodes (a trust store of their own) "
                    + "when TLS client certificates authenticate peers (tlsClientAuth=true): the JDK's default trust "
                    + "would admit any certificate a public CA signed; or tlsClientAuth=false");
        }
        return this;
    }

    /**
     * The key store only ({@code tlsKeyStore}, {@code tlsKeyStorePassword}, {@code tlsStoreType}): for a server
     * that presents a certificate and checks none, where a trust store would mean nothing (and is an unknown
     * property).
     */
    public static TlsConfig readKeyStore(PropertyReader r) {
        String keyStore = r.file(KEY_STORE, "key store");
        return new TlsConfig(keyStore, r.string(KEY_STORE_PASSWORD, ""), null, "",
                r.string(STORE_TYPE, DEFAULT_STORE_TYPE));
    }

    /** This node's key and certificate, or {@code null}. */
    public String keyStore() {
        return keyStore;
    }

    /** The certificates to trust, or {@code null} for the JDK's default trust. */
    public String trustStore() {
        return trustStore;
    }

    public boolean hasKeyStore() {
        return keyStore != null;
    }

    /** Whether any store was given. */
    public boolean configured() {
        return keyStore != null || trustStore != null;
    }

    /** A TLS context with these stores (see {@link TlsStores#context}). */
    public SSLContext context() throws IOException, GeneralSecurityException {
        return TlsStores.context(keyStore, keyStorePassword, trustStore, trustStorePassword, storeType);
    }

    @Override
    public String toString() {
        return "TlsConfig[keyStore=" + keyStore + ", trustStore=" + trustStore + ", type=" + storeType + "]";
    }
}
