package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;

import org.jgroups.BytesMessage;
import org.jgroups.Message;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.util.ByteArrayDataOutputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A relay batch that fills most of its frame is read in place (no copy of its bytes); anything else — a message
 * without ehrelay's header (e.g. a reply, whose {@code getObject()} ignores the offset), or a batch that is less
 * than half of its frame (which would keep the whole frame alive) — is copied out, as JGroups does.
 */
class PayloadGuardTest {

    @BeforeAll
    static void registerHeader() {
        ClassConfigurator.addIfAbsent(CallHeader.ID, CallHeader.class);
    }

    /** The message as it is written on the wire, then {@code padding} bytes more in the same frame. */
    private static FrameReader.Frame frameOf(Message m, int padding) throws Exception {
        ByteArrayDataOutputStream out = new ByteArrayDataOutputStream(1024);
        m.writeTo(out);
        byte[] frame = Arrays.copyOf(out.buffer(), out.position() + padding);
        return new FrameReader.Frame(frame, frame.length, null);
    }

    private static byte[] payload(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + 7);
        }
        return b;
    }

    private static PayloadGuard.Bytes read(FrameReader.Frame frame) throws Exception {
        PayloadGuard.Bytes m = new PayloadGuard.Bytes();
        m.readFrom(frame);
        return m;
    }

    private static byte[] content(Message m) {
        return Arrays.copyOfRange(m.getArray(), m.getOffset(), m.getOffset() + m.getLength());
    }

    @Test
    void aRelayBatchFillingItsFrame_staysInTheFrame() throws Exception {
        byte[] batch = payload(10_000);
        FrameReader.Frame frame = frameOf(new BytesMessage(null, batch).putHeader(CallHeader.ID,
                new CallHeader(CallHeader.POST)), 0);
        PayloadGuard.Bytes m = read(frame);
        assertThat(m.getArray()).as("no copy").isSameAs(frame.buffer());
        assertThat(m.getOffset()).isPositive();
        assertThat(content(m)).isEqualTo(batch);
        assertThat(frame.left()).as("the frame is read to the batch's end").isZero();
    }

    @Test
    void otherPayloads_areCopiedOut() throws Exception {
        byte[] batch = payload(10_000);
        FrameReader.Frame reply = frameOf(new BytesMessage(null, batch), 0);
        PayloadGuard.Bytes r = read(reply);
        assertThat(r.getArray()).as("no relay header: copied").isNotSameAs(reply.buffer());
        assertThat(content(r)).isEqualTo(batch);

        FrameReader.Frame crowded = frameOf(new BytesMessage(null, batch).putHeader(CallHeader.ID,
                new CallHeader(CallHeader.POST)), 12_000);
        PayloadGuard.Bytes small = read(crowded);
        assertThat(small.getArray()).as("less than half of its frame: copied").isNotSameAs(crowded.buffer());
        assertThat(content(small)).isEqualTo(batch);
        assertThat(crowded.left()).isEqualTo(12_000);
    }
}
