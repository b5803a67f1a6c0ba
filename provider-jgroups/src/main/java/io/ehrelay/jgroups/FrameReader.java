package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;

import org.jgroups.Address;
import org.jgroups.blocks.cs.Receiver;
import org.jgroups.protocols.TP;
import org.jgroups.util.ByteArrayDataInputStream;
import org.jgroups.util.Util;

/**
 * Reads each frame of an accepted connection whole before JGroups' {@code TCP} transport parses it, within
 * {@code max_length} and the node's memory bound ({@link BoundedSocketFactory.Metered#readFrame}); refuses a batch
 * claiming more messages than its frame holds, and with {@link PayloadGuard} a payload longer than what is left.
 * A refusal closes the connection, counted in {@code rejected}. See docs/jgroups.md, "Connections and frames being
 * read".
 */
final class FrameReader implements Receiver {

    /**
     * The fewest bytes a message takes in a batch (JGroups 5.x: its type, a leading byte, its flags and its
     * header count). JGroups sizes the batch's arrays (regular and out-of-band) to the count it reads.
     */
    static final int MIN_MESSAGE_BYTES = 7;

    private final Receiver transport;

    FrameReader(Receiver transport) {
        this.transport = transport;
    }

    @Override
    public void receive(Address sender, byte[] buf, int offset, int length) {
        transport.receive(sender, buf, offset, length);
    }

    @Override
    public void receive(Address sender, ByteBuffer buf) {
        transport.receive(sender, buf);
    }

    @Override
    @SuppressWarnings("removal") // the interface still declares it (JGroups 5.3 calls it)
    public void receive(Address sender, DataInput in) throws Exception {
        transport.receive(sender, in);
    }

    @Override
    public void receive(Address sender, DataInput in, int length) throws Exception {
        BoundedSocketFactory.Metered connection = in instanceof DataInputStream ? BoundedSocketFactory.reading() : null;
        if (connection == null) {
            transport.receive(sender, in, length);
            return;
        }
        byte[] frame = connection.readFrame(in, length);
        try {
            String why = batchCountTooLarge(frame, length);
            if (why != null) {
                throw connection.refuse(why);
            }
            transport.receive(sender, new Frame(frame, length, connection), length);
        } finally {
            connection.releaseCharge();
        }
    }

    /**
     * Why a frame's batch count is refused, or {@code null}. The layout read is JGroups' (5.x): version, flags,
     * then for a batch the destination, the sender, the cluster name and the count.
     */
    static String batchCountTooLarge(byte[] frame, int length) {
        ByteArrayDataInputStream in = new ByteArrayDataInputStream(frame, 0, length);
        try {
            in.readShort();
            if ((in.readByte() & TP.LIST) == 0) {
                return null;
            }
            Util.readAddress(in);
            Util.readAddress(in);
            short name = in.readShort();
            if (name > 0) {
                in.skipBytes(name);
            }
            int count = in.readInt();
            int left = length - in.position();
            if (count < 0 || (long) count * MIN_MESSAGE_BYTES > left) {
                return "a batch of " + count + " messages in a frame with " + left + " bytes left";
            }
            return null;
        } catch (Exception e) {
            return "a malformed frame (" + e + ")";
        }
    }

    /** A frame in memory: what is left of it bounds what a payload in it may claim. */
    static final class Frame extends ByteArrayDataInputStream {

        final BoundedSocketFactory.Metered connection;

        Frame(byte[] frame, int length, BoundedSocketFactory.Metered connection) {
            super(frame, 0, length);
            this.connection = connection;
        }

        /** Bytes of the frame not read yet. */
        int left() {
            return limit() - position();
        }

        /** A payload of {@code bytes} is about to be allocated: refused when the frame cannot hold it. */
        void claim(int bytes) throws IOException {
            if (bytes > left()) {
                throw connection.refuse("a payload of " + bytes + " bytes in a frame with " + left()
                        + " bytes left");
            }
        }
    }
}
