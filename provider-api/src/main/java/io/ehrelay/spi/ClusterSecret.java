package io.ehrelay.spi;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The cluster's shared secret (the provider property {@code clusterSecret}), for transports whose peers prove
 * they hold it by a challenge and a response: each side sends a fresh random nonce, and each answers with an
 * HMAC-SHA256 of both nonces under the secret, so the secret never crosses the wire and a recorded handshake does
 * not answer another connection's nonce. Immutable and thread-safe; its text never appears in logs or messages.
 */
public final class ClusterSecret {

    /** Bytes of a nonce. */
    public static final int NONCE_BYTES = 32;
    /** Bytes of a proof. */
    public static final int PROOF_BYTES = 32;
    /** The shortest secret accepted, in characters. */
    public static final int MIN_LENGTH = 16;

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String HMAC = "HmacSHA256";

    private final SecretKeySpec key;

    private ClusterSecret(byte[] key) {
        this.key = new SecretKeySpec(key, HMAC);
    }

    /**
     * @param text the secret as configured (at least {@link #MIN_LENGTH} characters)
     * @throws IllegalArgumentException when it is shorter
     */
    public static ClusterSecret of(String text) {
        if (text == null || text.length() < MIN_LENGTH) {
            throw new IllegalArgumentException("a cluster secret needs at least " + MIN_LENGTH + " characters");
        }
        try {
            // the key is a digest of the text: the same length whatever the text, and the text is not kept
            return new ClusterSecret(MessageDigest.getInstance("SHA-256")
                    .digest(("ehrelay cluster secret\0" + text).getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }

    /** A fresh random nonce. */
    public static byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        RANDOM.nextBytes(n);
        return n;
    }

    /**
     * The proof of holding the secret for one step of a handshake: HMAC-SHA256 over {@code label} (which step and
     * which side, so a proof is never valid for another step) and each part with its length.
     */
    public byte[] proof(String label, byte[]... parts) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(key);
            mac.update(label.getBytes(StandardCharsets.UTF_8));
            for (byte[] p : parts) {
                mac.update(new byte[] {(byte) (p.length >>> 24), (byte) (p.length >>> 16), (byte) (p.length >>> 8),
                        (byte) p.length});
                mac.update(p);
            }
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM has no HmacSHA256", e);
        }
    }

    /** Whether {@code given} is the {@link #proof} of these label and parts (compared in constant time). */
    public boolean verifies(byte[] given, String label, byte[]... parts) {
        return given != null && MessageDigest.isEqual(proof(label, parts), given);
    }

    @Override
    public String toString() {
        return "ClusterSecret(hidden)";
    }
}
