package io.ehrelay.internal.rpc;

import java.security.GeneralSecurityException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * HMAC-SHA256 under one key, for many threads: each thread keeps its own {@link Mac}, initialized once
 * ({@code doFinal} leaves it ready for the next message under the same key), instead of looking the algorithm
 * up and initializing it on every call. Thread-safe.
 */
final class Hmac {

    private static final String ALGORITHM = "HmacSHA256";

    private final SecretKeySpec key;
    private final ThreadLocal<Mac> perThread = ThreadLocal.withInitial(this::fresh);

    Hmac(byte[] key) {
        this.key = new SecretKeySpec(key, ALGORITHM);
        fresh(); // fails here, not on the first call, on a JVM without the algorithm
    }

    /** The MAC of the first {@code length} bytes of {@code data}: 32 bytes. */
    byte[] of(byte[] data, int length) {
        Mac mac = perThread.get();
        mac.update(data, 0, length);
        return mac.doFinal();
    }

    private Mac fresh() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM has no " + ALGORITHM, e);
        }
    }
}
