package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * A batch call written from the batch's buffer into a reused body reads back as the same call, whatever the
 * payload's length against the 8 KiB parts it passes through, and the same body serves call after call.
 */
class HessianWireTest {

    @Test
    void aCallWrittenFromABuffer_readsBackAsTheSamePayload_inAReusedBody() throws Exception {
        HessianWire.Body body = new HessianWire.Body();
        Random random = new Random(7);
        for (int length : new int[] {0, 1, 8191, 8192, 8193, 65_534, 65_535, 65_536, 70_000, 131_070, 131_071, 1 << 20, 5}) {
            byte[] payload = new byte[length];
            random.nextBytes(payload);
            ByteBuffer direct = ByteBuffer.allocateDirect(length + 10);
            direct.position(3);
            direct.put(payload);
            direct.flip().position(3); // the batch sits at 3..3+length of a larger buffer
            ByteBuffer before = direct.duplicate();

            HessianWire.call("post", Envelope.of("peer-a", null), direct, body);

            assertThat(direct).as("the buffer is not moved").isEqualTo(before);
            assertThat(direct.position()).isEqualTo(3);
            HessianWire.Call call = HessianWire.readCall(new ByteArrayInputStream(body.array(), 0, body.size()),
                    2L << 20);
            assertThat(call.method).isEqualTo("post");
            Envelope e = (Envelope) call.argument;
            assertThat(e.payloadLength).isEqualTo(length);
            assertThat(e.payload).as("length %d", length).isEqualTo(payload);
        }
    }
}
