package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;

import io.ehrelay.spi.Batch;
import org.jgroups.BytesMessage;
import org.jgroups.Message;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.util.ByteArrayDataInputStream;
import org.jgroups.util.ByteArrayDataOutputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A batch posted as pieces is, on the wire, the BytesMessage a member expects: same type, same bytes. */
class PiecesMessageTest {

    private static final byte[] VALUE = new byte[3000];
    private static final byte[] BATCH = new byte[5000];

    @BeforeAll
    static void register() {
        ClassConfigurator.addIfAbsent(CallHeader.ID, CallHeader.class);
        Arrays.fill(VALUE, (byte) 42);
        for (int i = 0; i < BATCH.length; i++) {
            BATCH[i] = (byte) (i * 13);
        }
        System.arraycopy(VALUE, 0, BATCH, 1000, VALUE.length);
    }

    private static Batch batch() {
        ByteBuffer direct = ByteBuffer.allocateDirect(BATCH.length);
        direct.put(BATCH).flip();
        return new Batch(direct, 1, new int[] {1000}, new byte[][] {VALUE}, 1);
    }

    private static byte[] wire(Message m) throws Exception {
        ByteArrayDataOutputStream out = new ByteArrayDataOutputStream(m.size());
        out.writeShort(m.getType());
        m.writeTo(out);
        return Arrays.copyOf(out.buffer(), out.position());
    }

    private static Message post(Message m) {
        return m.putHeader(CallHeader.ID, new CallHeader(CallHeader.POST));
    }

    @Test
    void onTheWire_itIsTheBytesMessageOfTheWholeBatch() throws Exception {
        Message pieces = post(new PiecesMessage(null, batch().pieces()));
        Message bytes = post(new BytesMessage(null, BATCH));
        assertThat(pieces.getType()).isEqualTo(bytes.getType());
        assertThat(pieces.getLength()).isEqualTo(BATCH.length);
        assertThat(pieces.size()).isEqualTo(bytes.size());
        byte[] wire = wire(pieces);
        assertThat(wire).isEqualTo(wire(bytes));

        ByteArrayDataInputStream in = new ByteArrayDataInputStream(wire);
        in.readShort();
        BytesMessage read = new BytesMessage();
        read.readFrom(in);
        assertThat(read.getArray()).isEqualTo(BATCH);
        assertThat(((CallHeader) read.getHeader(CallHeader.ID)).op).isEqualTo(CallHeader.POST);
    }

    @Test
    void aCopyJGroupsMakes_keepsThePiecesAndHeaders_andAnArrayIsMadeOnlyWhenAsked() throws Exception {
        Message pieces = post(new PiecesMessage(null, batch().pieces()));
        Message copy = pieces.copy(true, true);
        assertThat(copy).isInstanceOf(PiecesMessage.class);
        assertThat(wire(copy)).isEqualTo(wire(pieces));
        assertThat(pieces.hasArray()).as("fragmenting protocols write it whole, not from an array").isFalse();
        assertThat(pieces.getArray()).isEqualTo(BATCH);
    }

    @Test
    void itIsNeverRead() {
        assertThatThrownBy(() -> new PiecesMessage().readPayload(new ByteArrayDataInputStream(new byte[8])))
                .isInstanceOf(UnsupportedOperationException.class);
    }
}
