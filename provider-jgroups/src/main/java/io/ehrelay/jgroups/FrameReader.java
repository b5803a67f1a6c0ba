package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.internal.InboundBudget;
import org.jgroups.Address;
import org.jgroups.blocks.cs.Receiver;
import org.jgroups.protocols.TP;
import org.jgroups.util.ByteArrayDataInputStream;
import org.jgroups.util.Util;

/**
 * Reads each frame of an accepted connection whole before JGroups' {@code TCP} transport parses it, within
 * {@code max_length} and the node's memory bound ({@link BoundedSocketFactory.Metered#readFrame}); refuses a batch
 * claiming more messages than its frame holds, and with {@link PayloadGuard} a payload longer than what is left.
 * A refusal closes the connection, counted in {@code rejected}. A frame is read into an array of the node's
 * {@code inboundBufferMaxBytes} pool ({@link InboundBudget#borrowForParse}), given back once JGroups has parsed it and every
 * batch left in it has been applied ({@link Frame#keep}). See docs/jgroups.md, "Connections and frames being read".
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
        InboundBudget.Borrowed array = connection.readFrame(in, length);
        Frame frame = new Frame(connection.budget(), array, length, connection);
        try {
            String why = batchCountTooLarge(array.array(), length);
            if (why != null) {
                throw connection.refuse(why);
            }
            transport.receive(sender, frame, length);
        } finally {
            connection.releaseCharge();
            frame.parsed();
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

    /**
     * A frame in memory: what is left of it bounds what a payload in it may claim. Its array is given back to the
     * pool it came from once JGroups has parsed the frame ({@link #parsed}) and each batch left in it
     * ({@link #keep}) has been applied; a batch that is never handed to the relay (a message JGroups drops, e.g. a
     * retransmission it already had) leaves the array to the garbage collector instead. Nothing reads a frame after
     * its array is given back: JGroups parses it on the reading thread, and a batch left in it is read until the
     * relay runs the batch's {@code done}.
     */
    static final class Frame extends ByteArrayDataInputStream {

        /** Runs nothing: for an array that was not borrowed. */
        static final Runnable NOTHING = () -> { };

        final BoundedSocketFactory.Metered connection;
        /** The pool batches copied out of the frame are read into ({@code null}: arrays of their own). */
        private final InboundBudget budget;
        private final InboundBudget.Borrowed array;
        /** The parse, plus each batch left in the frame and not applied yet. */
        private final AtomicInteger holders = new AtomicInteger(1);

        /** A frame in an array of its own (tests); copies out of it are arrays of their own too. */
        Frame(byte[] frame, int length, BoundedSocketFactory.Metered connection) {
            super(frame, 0, length);
            this.connection = connection;
            this.budget = null;
            this.array = null;
        }

        /**
         * A frame read into {@code array} (its first {@code length} bytes) from {@code connection}, with
         * {@code budget}'s pool for the batches copied out of it.
         */
        Frame(InboundBudget budget, InboundBudget.Borrowed array, int length,
                BoundedSocketFactory.Metered connection) {
            super(array.array(), 0, length);
            this.connection = connection;
            this.budget = budget;
            this.array = array;
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

        /**
         * Whether a batch may stay in this frame's array past the parse: an array of its own, or one from the pool
         * at most an eighth longer than the frame (a frame may be parsed in a much longer one).
         */
        boolean canKeep() {
            return array == null || array.fits();
        }

        /**
         * A batch stays in this frame's array ({@link #canKeep}): what to run, once, when nothing reads the batch
         * any more (the relay's {@code done}).
         */
        Runnable keep() {
            if (array == null) {
                return NOTHING;
            }
            holders.incrementAndGet();
            AtomicBoolean once = new AtomicBoolean();
            return () -> {
                if (once.compareAndSet(false, true)) {
                    release();
                }
            };
        }

        /** JGroups has parsed the frame (or failed to): only the batches left in it still hold its array. */
        void parsed() {
            release();
        }

        private void release() {
            if (holders.decrementAndGet() == 0 && array != null) {
                array.giveBack();
            }
        }

        /**
         * The next {@code length} bytes (claimed), copied into an array of the connection's pool (reused above
         * 64 KB), to be given back with {@link InboundBudget.Borrowed#giveBack} when nothing reads them any more.
         */
        InboundBudget.Borrowed copyOut(int length) throws IOException {
            InboundBudget.Borrowed copy = budget == null ? InboundBudget.own(length) : budget.borrow(length);
            readFully(copy.array(), 0, length);
            return copy;
        }
    }
}
