package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;

import io.ehrelay.internal.InboundBudget;
import io.ehrelay.spi.Clock;
import org.jgroups.BytesMessage;
import org.jgroups.Message;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.util.ByteArrayDataOutputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A relay batch that fills most of its frame is read in place (no copy of its bytes); anything else — a message
 * without ehrelay's header (e.g. a reply, whose {@code getObject()} ignores the offset), or a batch that is less
 * than half of its frame (which would keep the whole frame alive) — is copied out, as JGroups does. A frame read
 * into a pooled array gives it back once parsed and once the batch left in it has been applied, not before.
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

    /** The bytes of {@code m} on the wire, then {@code padding} bytes more. */
    private static byte[] wire(Message m, int padding) throws Exception {
        ByteArrayDataOutputStream out = new ByteArrayDataOutputStream(1024);
        m.writeTo(out);
        return Arrays.copyOf(out.buffer(), out.position() + padding);
    }

    /** {@code wire} read into an array of {@code budget}'s pool, as {@link FrameReader} reads a connection's frame. */
    private static FrameReader.Frame pooledFrame(InboundBudget budget, byte[] wire) {
        InboundBudget.Borrowed array = budget.borrowForParse(wire.length);
        System.arraycopy(wire, 0, array.array(), 0, wire.length);
        return new FrameReader.Frame(budget, array, wire.length, null);
    }

    @Test
    void aBatchLeftInAPooledFrame_keepsItsArray_untilParsedAndApplied() throws Exception {
        InboundBudget budget = new InboundBudget(64L << 20, Clock.SYSTEM);
        byte[] batch = payload(200_000);
        byte[] wire = wire(new BytesMessage(null, batch).putHeader(CallHeader.ID,
                new CallHeader(CallHeader.POST)), 0);
        FrameReader.Frame frame = pooledFrame(budget, wire);
        byte[] array = frame.buffer();
        PayloadGuard.Bytes m = read(frame);
        assertThat(m.getArray()).as("in place").isSameAs(array);
        frame.parsed();
        assertThat(budget.borrowForParse(wire.length).array()).as("the batch still reads it").isNotSameAs(array);

        Runnable done = PayloadGuard.release(m);
        done.run();
        done.run(); // the relay runs it once; a second run must not give the array back twice
        assertThat(content(m)).as("untouched until reused").isEqualTo(batch);
        assertThat(budget.borrowForParse(wire.length).array()).as("applied and parsed: back for the next frame")
                .isSameAs(array);
        assertThat(budget.borrowForParse(wire.length).array()).as("given back once").isNotSameAs(array);
    }

    @Test
    void aFrameParsedInALongerArray_copiesItsBatchOut_andIsBackOnceParsed() throws Exception {
        InboundBudget budget = new InboundBudget(64L << 20, Clock.SYSTEM);
        byte[] batch = payload(200_000);
        InboundBudget.Borrowed longer = budget.borrow(1 << 20);
        byte[] longArray = longer.array();
        longer.giveBack();
        byte[] wire = wire(new BytesMessage(null, batch).putHeader(CallHeader.ID,
                new CallHeader(CallHeader.DELIVER)), 0);
        FrameReader.Frame frame = pooledFrame(budget, wire);
        assertThat(frame.buffer()).isSameAs(longArray);
        assertThat(frame.canKeep()).as("five times the frame: no batch may stay in it").isFalse();

        PayloadGuard.Bytes m = read(frame);
        byte[] copy = m.getArray();
        assertThat(copy).as("copied out").isNotSameAs(longArray);
        assertThat(content(m)).isEqualTo(batch);
        frame.parsed();
        assertThat(budget.borrowForParse(wire.length).array()).as("parsed: back at once").isSameAs(longArray);

        PayloadGuard.release(m).run();
        assertThat(budget.borrow(batch.length).array()).as("the copy's array, once applied").isSameAs(copy);
    }

    @Test
    void messagesWithoutABatch_haveNothingToGiveBack() throws Exception {
        InboundBudget budget = new InboundBudget(64L << 20, Clock.SYSTEM);
        byte[] wire = wire(new BytesMessage(null, payload(200_000)), 0);
        FrameReader.Frame frame = pooledFrame(budget, wire);
        byte[] array = frame.buffer();
        PayloadGuard.Bytes reply = read(frame);
        assertThat(reply.getArray()).isNotSameAs(array);
        assertThat(PayloadGuard.release(reply)).isSameAs(FrameReader.Frame.NOTHING);
        frame.parsed();
        assertThat(budget.borrowForParse(wire.length).array()).isSameAs(array);
    }
}
