package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.IOException;

import io.ehrelay.internal.InboundBudget;
import org.jgroups.BytesMessage;
import org.jgroups.FragmentedMessage;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.NioMessage;

/**
 * Replaces JGroups' readers of the message types that carry an array, which allocate the payload at a length
 * written in the message before any check: read from an accepted connection's frame ({@link FrameReader.Frame}),
 * a payload longer than what is left of the frame closes the connection before the allocation; other messages are
 * read as JGroups reads them. Installed as {@link ObjectMessageGuard} is (docs/jgroups.md, "Message size").
 */
final class PayloadGuard {

    private static volatile boolean installedJvmWide;

    private PayloadGuard() {
    }

    /** Installs the guard for {@code channel} (before it connects). */
    static void install(JChannel channel) {
        if (ObjectMessageGuard.perChannel()) {
            GuardedMessageFactory.guardPayloadsOn(channel);
        } else {
            installJvmWide();
        }
    }

    private static synchronized void installJvmWide() {
        if (installedJvmWide) {
            return;
        }
        ObjectMessageGuard.replaceReaders("the guard on JGroups message payloads", "",
                new short[] {Message.BYTES_MSG, Message.NIO_MSG, Message.FRAG_MSG}, Bytes::new, Nio::new,
                Fragment::new);
        installedJvmWide = true;
    }

    /** The guarded reader of a message type, or {@code null} for the types it leaves to JGroups. */
    static Message create(short type) {
        switch (type) {
            case Message.BYTES_MSG:
                return new Bytes();
            case Message.NIO_MSG:
                return new Nio();
            case Message.FRAG_MSG:
                return new Fragment();
            default:
                return null;
        }
    }

    /**
     * The message's input, whose first {@code int} — the payload's length, in each of the three types — must fit
     * in what is left of the frame being read ({@link FrameReader.Frame}) before JGroups allocates. Inputs that
     * are not an accepted connection's frame (fragments reassembled, messages decrypted, other transports) are
     * read as JGroups reads them.
     */
    static final class Checked implements DataInput {

        private final FrameReader.Frame frame;
        private boolean lengthSeen;

        private Checked(FrameReader.Frame frame) {
            this.frame = frame;
        }

        /** The input to read the message from: checked only when it is a connection's frame. */
        static DataInput of(DataInput in) {
            return in instanceof FrameReader.Frame ? new Checked((FrameReader.Frame) in) : in;
        }

        @Override
        public int readInt() throws IOException {
            int v = frame.readInt();
            if (!lengthSeen) {
                lengthSeen = true;
                if (v > 0) {
                    frame.claim(v);
                }
            }
            return v;
        }

        @Override
        public void readFully(byte[] b) throws IOException {
            frame.readFully(b);
        }

        @Override
        public void readFully(byte[] b, int off, int len) throws IOException {
            frame.readFully(b, off, len);
        }

        @Override
        public int skipBytes(int n) throws IOException {
            return frame.skipBytes(n);
        }

        @Override
        public boolean readBoolean() throws IOException {
            return frame.readBoolean();
        }

        @Override
        public byte readByte() throws IOException {
            return frame.readByte();
        }

        @Override
        public int readUnsignedByte() throws IOException {
            return frame.readUnsignedByte();
        }

        @Override
        public short readShort() throws IOException {
            return frame.readShort();
        }

        @Override
        public int readUnsignedShort() throws IOException {
            return frame.readUnsignedShort();
        }

        @Override
        public char readChar() throws IOException {
            return frame.readChar();
        }

        @Override
        public long readLong() throws IOException {
            return frame.readLong();
        }

        @Override
        public float readFloat() throws IOException {
            return frame.readFloat();
        }

        @Override
        public double readDouble() throws IOException {
            return frame.readDouble();
        }

        @Override
        public String readLine() throws IOException {
            return frame.readLine();
        }

        @Override
        public String readUTF() throws IOException {
            return frame.readUTF();
        }
    }

    /**
     * What to run once the relay no longer reads {@code msg}'s batch (its {@code done}): gives back the pooled
     * array the batch was read into, if it was ({@link Bytes}); else nothing.
     */
    static Runnable release(Message msg) {
        return msg instanceof Bytes ? ((Bytes) msg).release : FrameReader.Frame.NOTHING;
    }

    static final class Bytes extends BytesMessage {
        /** Gives back the array this message's batch was read into (once); nothing for other messages. */
        private Runnable release = FrameReader.Frame.NOTHING;

        /**
         * A relay call's batch ({@link CallHeader}: read by ehrelay through its array, offset and length) that
         * takes at least half of its frame stays in the frame, which is its own array: the copy of every received
         * batch byte is saved, and the frame kept alive with it is at most twice the batch (plus the eighth a
         * reused array may be longer), which is what the relay's bounds count (so they hold at most that much more
         * than they say). A smaller batch is copied out into an array of the node's pool, as the other transports
         * read their batches, so that the frame's array can serve the next frame. Either array is given back once
         * the batch has been applied ({@link #release(Message)}). Other payloads are copied out, as JGroups does:
         * {@code getObject()} of a message JGroups did not serialize is its whole array (offset and length
         * ignored), so e.g. replies must not be left in their frame nor in a longer pooled array.
         */
        @Override
        public void readPayload(DataInput in) throws IOException {
            if (in instanceof FrameReader.Frame && getHeader(CallHeader.ID) != null) {
                FrameReader.Frame frame = (FrameReader.Frame) in;
                int start = frame.position();
                int length = frame.readInt();
                if (length > 0) {
                    frame.claim(length);
                    if (2L * length >= frame.limit() && frame.canKeep()) {
                        setArray(frame.buffer(), frame.position(), length);
                        frame.skipBytes(length); // claimed: the frame holds it
                        release = frame.keep();
                        return;
                    }
                    InboundBudget.Borrowed copy = frame.copyOut(length);
                    setArray(copy.array(), 0, length);
                    release = copy::giveBack;
                    return;
                }
                frame.position(start); // as JGroups reads it, from its length on
            }
            super.readPayload(Checked.of(in));
        }
    }

    static final class Fragment extends FragmentedMessage {
        @Override
        public void readPayload(DataInput in) throws IOException {
            super.readPayload(Checked.of(in));
        }
    }

    static final class Nio extends NioMessage {
        @Override
        public void readPayload(DataInput in) throws IOException {
            super.readPayload(Checked.of(in));
        }
    }
}
