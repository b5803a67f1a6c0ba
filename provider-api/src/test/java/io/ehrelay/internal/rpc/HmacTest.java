package io.ehrelay.internal.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.junit.jupiter.api.Test;

class HmacTest {

    private static byte[] reference(byte[] key, byte[] data, int length) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        mac.update(data, 0, length);
        return mac.doFinal();
    }

    @Test
    void eachMessage_getsTheMacOfAFreshlyInitializedMac_onEveryThread_howeverManyCameBefore() throws Exception {
        byte[] key = "a 32-byte key for the hmac test.".getBytes(StandardCharsets.US_ASCII);
        Hmac hmac = new Hmac(key);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int thread = t;
                done.add(pool.submit(() -> {
                    int checked = 0;
                    for (int i = 0; i < 2_000; i++) {
                        byte[] data = ("message " + thread + "/" + i + " with a tail").getBytes(StandardCharsets.UTF_8);
                        int length = data.length - (i % 7); // only the first bytes count
                        byte[] got = hmac.of(data, length);
                        if (!Arrays.equals(got, reference(key, data, length))) {
                            throw new AssertionError("thread " + thread + ", message " + i + ": another MAC");
                        }
                        checked++;
                    }
                    return checked;
                }));
            }
            int total = 0;
            for (Future<Integer> f : done) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            assertThat(total).isEqualTo(8_000);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anotherKey_anotherMac() throws Exception {
        byte[] data = "the same message".getBytes(StandardCharsets.UTF_8);
        byte[] a = new Hmac(new byte[32]).of(data, data.length);
        byte[] key = new byte[32];
        key[31] = 1;
        byte[] b = new Hmac(key).of(data, data.length);
        assertThat(a).hasSize(32).isNotEqualTo(b);
        assertThat(b).isEqualTo(reference(key, data, data.length));
    }
}
