package io.ehrelay.tcp;

import java.nio.ByteBuffer;

import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.MalformedFrameException;

/**
 * The 16-byte header in front of every TCP frame, and the frame types (docs/wire-format.md, "TCP frames").
 * {@link #readHeader} validates magic, version, type and length before the body is allocated, so a garbled or
 * hostile stream is rejected after 16 bytes. Stateless and thread-safe.
 */
final class Frames {

    public static final int MAGIC = 0xEB1A;
    public static final int VERSION = 1;
    public static final int HEADER_BYTES = 16;

    /** Frame types. The codes are part of the wire format: never renumber. */
    public enum Type {
        /** An event batch ({@link EventCodec}) whose sender does not wait for an acknowledgement. */
        EVENTS(1),
        /** An event batch the sender waits on: answered by ACK or NACK with the same correlation id. */
        EVENTS_ACK(2),
        /** The batch with this correlation id was applied. */
        ACK(3),
        /** The batch or request with this correlation id failed; the body is a UTF-8 reason. */
        NACK(4),
        /** Asks for a cache's content: body is i32 maxChunkBytes · UTF-8 cache name. */
        STATE_REQUEST(5),
        /** One chunk of state: an event batch of PUT events. */
        STATE_CHUNK(6),
        /** The state transfer with this correlation id is complete. */
        STATE_END(7),
        /** First frame on a connection: body is the sender's endpoint (UTF-8). */
        HELLO(8),
        /**
         * The listener's answer to HELLO when it has a cluster secret: body is u8 version(1) · 32-byte nonce. The
         * connecting node must answer with AUTH before anything else.
         */
        CHALLENGE(9),
        /**
         * Connecting node: 32-byte nonce · 32-byte proof of the secret over both nonces and its endpoint.
         * Listener's answer: its 32-byte proof over both nonces. Anything else closes the connection.
         */
        AUTH(10);

        private final int code;

        Type(int code) {
            this.code = code;
        }

        public int code() {
            return code;
        }

        static Type of(int code) throws MalformedFrameException {
            for (Type t : values()) {
                if (t.code == code) {
                    return t;
                }
            }
            throw new MalformedFrameException("unknown frame type " + code);
        }
    }

    /** A validated header. */
    public static final class Header {
        private final Type type;
        private final long correlationId;
        private final int bodyLength;

        Header(Type type, long correlationId, int bodyLength) {
            this.type = type;
            this.correlationId = correlationId;
            this.bodyLength = bodyLength;
        }

        public Type type() { return type; }
        public long correlationId() { return correlationId; }
        public int bodyLength() { return bodyLength; }
    }

    private Frames() {
    }

    public static void writeHeader(ByteBuffer out, Type type, long correlationId, int bodyLength) {
        out.putShort((short) MAGIC);
        out.put((byte) VERSION);
        out.put((byte) type.code());
        out.putLong(correlationId);
        out.putInt(bodyLength);
    }

    public static ByteBuffer header(Type type, long correlationId, int bodyLength) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES);
        writeHeader(b, type, correlationId, bodyLength);
        b.flip();
        return b;
    }

    /** Reads and validates 16 header bytes from {@code in} (big-endian), advancing its position. */
    public static Header readHeader(ByteBuffer in, int maxBodyBytes) throws MalformedFrameException {
        int magic = in.getShort() & 0xffff;
        if (magic != MAGIC) {
            throw new MalformedFrameException(String.format("bad frame magic 0x%04x", magic));
        }
        int version = in.get() & 0xff;
        if (version != VERSION) {
            throw new MalformedFrameException("unsupported frame version " + version);
        }
        Type type = Type.of(in.get() & 0xff);
        long correlation = in.getLong();
        int length = in.getInt();
        if (length < 0 || length > maxBodyBytes) {
            throw new MalformedFrameException("frame body of " + (length & 0xffffffffL)
                    + " bytes exceeds maxFrameBytes=" + maxBodyBytes);
        }
        return new Header(type, correlation, length);
    }
}
