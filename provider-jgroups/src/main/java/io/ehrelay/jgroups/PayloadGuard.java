package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.IOException;

import org.jgroups.BytesMessage;
import org.jgroups.FragmentedMessage;
import org.jgroups.Message;
import org.jgroups.NioMessage;

/**
 * JGroups allocates a message's payload at the length written inside the message, as it reads the message off a
 * connection — before any protocol (AUTH, ENCRYPT) or membership check, and whatever the frame length in front of
 * it said. So a process that reaches a member's port could make it allocate up to 2 GB per message. The guard
 * replaces JGroups' readers of the three message types that carry an array ({@link BytesMessage},
 * {@link FragmentedMessage}, {@link NioMessage}): the payload's length goes to the accepted connection being read
 * on this thread ({@link InboundSockets#reading()}) before JGroups allocates, which refuses it or charges it to
 * the node's {@code inboundBufferMaxBytes}. Messages read on other threads (UDP transports, another JGroups
 * application in the JVM) are read as JGroups reads them.
 *
 * <p>As {@link ObjectMessageGuard}: with JGroups 5.3/5.4 the readers are installed on ehrelay's channels
 * ({@link GuardedMessageFactory}), with 5.5 and later in JGroups' one table for the JVM.
 */
final class PayloadGuard {

    private static volatile boolean installedJvmWide;

    private PayloadGuard() {
    }

    /** Installs the guard for {@code channel} (before it connects). */
    static void install(org.jgroups.JChannel channel) {
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
     * The message's input, whose first {@code int} — the payload's length, in each of the three types — is
     * cleared with the connection before JGroups allocates; {@link #close()} gives the share back.
     */
    static final class Checked implements DataInput, AutoCloseable {

        private final DataInput in;
        /**
         * The connection, when {@code in} is its stream: JGroups reads a connection through a
         * {@link java.io.DataInputStream}, and messages it builds again from arrays (fragments reassembled,
         * decrypted, decompressed) through its own {@code ByteArrayDataInputStream} — those are not the
         * connection's, and are not checked.
         */
        private final InboundSockets.Metered connection;
        private boolean lengthSeen;

        Checked(DataInput in) {
            this.in = in;
            this.connection = in instanceof java.io.DataInputStream ? InboundSockets.reading() : null;
        }

        @Override
        public int readInt() throws IOException {
            int v = in.readInt();
            if (!lengthSeen) {
                lengthSeen = true;
                if (connection != null && v > 0) {
                    connection.takePayload(v);
                }
            }
            return v;
        }

        @Override
        public void close() {
            if (connection != null) {
                connection.releaseCharge();
            }
        }

        @Override
        public void readFully(byte[] b) throws IOException {
            in.readFully(b);
        }

        @Override
        public void readFully(byte[] b, int off, int len) throws IOException {
            in.readFully(b, off, len);
        }

        @Override
        public int skipBytes(int n) throws IOException {
            return in.skipBytes(n);
        }

        @Override
        public boolean readBoolean() throws IOException {
            return in.readBoolean();
        }

        @Override
        public byte readByte() throws IOException {
            return in.readByte();
        }

        @Override
        public int readUnsignedByte() throws IOException {
            return in.readUnsignedByte();
        }

        @Override
        public short readShort() throws IOException {
            return in.readShort();
        }

        @Override
        public int readUnsignedShort() throws IOException {
            return in.readUnsignedShort();
        }

        @Override
        public char readChar() throws IOException {
            return in.readChar();
        }

        @Override
        public long readLong() throws IOException {
            return in.readLong();
        }

        @Override
        public float readFloat() throws IOException {
            return in.readFloat();
        }

        @Override
        public double readDouble() throws IOException {
            return in.readDouble();
        }

        @Override
        public String readLine() throws IOException {
            return in.readLine();
        }

        @Override
        public String readUTF() throws IOException {
            return in.readUTF();
        }
    }

    static final class Bytes extends BytesMessage {
        @Override
        public void readPayload(DataInput in) throws IOException {
            try (Checked checked = new Checked(in)) {
                super.readPayload(checked);
            }
        }
    }

    static final class Fragment extends FragmentedMessage {
        @Override
        public void readPayload(DataInput in) throws IOException {
            try (Checked checked = new Checked(in)) {
                super.readPayload(checked);
            }
        }
    }

    static final class Nio extends NioMessage {
        @Override
        public void readPayload(DataInput in) throws IOException {
            try (Checked checked = new Checked(in)) {
                super.readPayload(checked);
            }
        }
    }
}
