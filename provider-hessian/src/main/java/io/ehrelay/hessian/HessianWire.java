package io.ehrelay.hessian;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;

import com.caucho.hessian.io.Hessian2Input;
import com.caucho.hessian.io.Hessian2Output;
import com.caucho.hessian.io.SerializerFactory;
import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.Streams;
import io.ehrelay.internal.rpc.RpcException;

/**
 * Hessian 2 calls and replies of the relay protocol. The serializer factory is in allow-list mode and allows
 * {@link Envelope} only: a call carrying any other class is read as a plain map (Hessian's fallback for classes
 * it may not load), never as that class, and then refused because it is not an envelope.
 */
final class HessianWire {

    static final String CONTENT_TYPE = "x-application/hessian";

    private static final SerializerFactory FACTORY = newFactory();

    private HessianWire() {
    }

    private static SerializerFactory newFactory() {
        SerializerFactory f = new SerializerFactory(HessianWire.class.getClassLoader());
        f.getClassFactory().setWhitelist(true);
        f.getClassFactory().allow(Envelope.class.getName());
        return f;
    }

    /** A call: the envelope, and when it has a payload, the payload as a second (binary) argument. */
    static byte[] call(String method, Envelope envelope) throws IOException {
        byte[] payload = envelope.payload;
        envelope.payloadLength = payload == null ? -1 : payload.length;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256 + (payload == null ? 0 : payload.length + payload.length / 1024));
        Hessian2Output out = new Hessian2Output(bytes);
        out.setSerializerFactory(FACTORY);
        out.startCall(method, payload == null ? 1 : 2);
        out.writeObject(envelope);
        if (payload != null) {
            out.writeBytes(payload);
        }
        out.completeCall();
        out.flush();
        return bytes.toByteArray();
    }

    /**
     * A call's body, built again for every batch in the same array (it grows to the largest, about
     * {@code batchMaxBytes}), so that sending a batch allocates nothing of its size. One thread at a time.
     */
    static final class Body extends ByteArrayOutputStream {
        /** The largest chunk of a Hessian 2 binary: its length is two bytes. */
        static final int MAX_CHUNK = 0xFFFF;

        Body() {
            super(8192);
        }

        byte[] array() {
            return buf;
        }

        /**
         * Appends {@code from} (its position to its limit; not moved) as a Hessian 2 binary: chunks of at most
         * {@link #MAX_CHUNK} bytes, each a tag ({@code 'A'}, the last {@code 'B'}) and a two-byte length, copied
         * from the buffer straight into this body's array (Hessian's own binary writer stages each part twice
         * more, through its output buffer).
         */
        void writeBinary(ByteBuffer from) {
            ByteBuffer src = from.duplicate();
            int left = src.remaining();
            int tags = left / MAX_CHUNK + 1;
            ensureRoom(left + 3 * tags);
            do {
                int n = Math.min(left, MAX_CHUNK);
                left -= n;
                buf[count++] = (byte) (left > 0 ? 'A' : 'B');
                buf[count++] = (byte) (n >>> 8);
                buf[count++] = (byte) n;
                src.get(buf, count, n);
                count += n;
            } while (left > 0);
        }

        private void ensureRoom(int more) {
            long need = (long) count + more;
            if (need > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException("a call of " + need + " bytes");
            }
            if (need > buf.length) {
                buf = Arrays.copyOf(buf, (int) Math.max(need, Math.min(Integer.MAX_VALUE - 8L,
                        buf.length + (long) (buf.length >> 1))));
            }
        }
    }

    /**
     * A call with a payload read from {@code payload} (its position to its limit; not moved) into {@code body},
     * which is reset first: the same call as {@link #call(String, Envelope)} makes from an array holding the
     * payload (the binary in chunks of up to 64 KiB instead of Hessian's 8 KiB), without that array and with one
     * copy of the payload.
     */
    static void call(String method, Envelope envelope, ByteBuffer payload, Body body) throws IOException {
        ByteBuffer from = payload.duplicate();
        envelope.payload = null;
        envelope.payloadLength = from.remaining();
        body.reset();
        Hessian2Output out = new Hessian2Output(body);
        out.setSerializerFactory(FACTORY);
        out.startCall(method, 2);
        out.writeObject(envelope);
        out.flush(); // what Hessian buffered goes into the body before the payload's bytes
        body.writeBinary(from);
        out.completeCall();
        out.flush();
    }

    /** A call as the server reads it: the first argument as Hessian made it, and the payload if any. */
    static final class Call {
        final String method;
        final Object argument;

        Call(String method, Object argument) {
            this.method = method;
            this.argument = argument;
        }
    }

    /**
     * Reads a call from a request body. The first argument goes through the allow-list factory; when it is an
     * envelope announcing a payload, the second argument must be a Hessian binary of exactly that many bytes,
     * at most {@code maxPayloadBytes}, read in bulk into the envelope's {@code payload}.
     *
     * @throws IOException when the bytes are not such a call
     */
    static Call readCall(InputStream body, long maxPayloadBytes) throws IOException {
        return readCall(body, maxPayloadBytes, null);
    }

    /**
     * As {@link #readCall(InputStream, long)}; the batch of a {@code deliver} or {@code post} is read into an array
     * of {@code arrays} (when given: {@link io.ehrelay.internal.InboundBudget#borrow}, reused for a large batch),
     * which goes back with {@link Envelope#recycle} once the batch was applied.
     */
    static Call readCall(InputStream body, long maxPayloadBytes, InboundBudget arrays)
            throws IOException {
        Hessian2Input in = new Hessian2Input(body);
        in.setSerializerFactory(FACTORY);
        try {
            in.readCall();
            String method = in.readMethod();
            int args = in.readMethodArgLength();
            if (args != 1 && args != 2) {
                throw new IOException("expected one or two arguments, got " + args);
            }
            Object argument = in.readObject();
            if (!(argument instanceof Envelope)) {
                return new Call(method, argument); // refused by the caller; nothing after it is read
            }
            Envelope envelope = (Envelope) argument;
            if (args == 1 && envelope.payloadLength >= 0 || args == 2 && envelope.payloadLength < 0) {
                throw new IOException("the envelope announces a payload of " + envelope.payloadLength
                        + " bytes but the call has " + args + " argument(s)");
            }
            if (args == 2) {
                int length = envelope.payloadLength;
                if (length > maxPayloadBytes) {
                    throw new IOException("payload of " + length + " bytes announced, limit " + maxPayloadBytes);
                }
                InputStream binary = in.readInputStream();
                if (binary == null) {
                    throw new IOException("payload expected, got null");
                }
                if (arrays != null && ("deliver".equals(method) || "post".equals(method))) {
                    InboundBudget.Borrowed batch = arrays.borrow(length);
                    try {
                        readExactly(binary, batch.array(), length);
                    } catch (IOException | RuntimeException e) {
                        batch.giveBack();
                        throw e;
                    }
                    envelope.batch = batch;
                } else {
                    envelope.payload = new byte[length];
                    readExactly(binary, envelope.payload, length);
                }
            }
            in.completeCall();
            return new Call(method, envelope);
        } catch (RuntimeException e) {
            throw new IOException("not a Hessian call: " + e, e);
        }
    }

    /** Reads a Hessian binary of exactly {@code length} bytes into the first {@code length} bytes of {@code into}. */
    private static void readExactly(InputStream binary, byte[] into, int length) throws IOException {
        int got = Streams.readFully(binary, into, 0, length);
        if (got != length || binary.read() != -1) {
            throw new IOException("the payload is not the announced " + length + " bytes");
        }
    }

    static byte[] reply(Object value) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + (value instanceof byte[]
                ? ((byte[]) value).length : 0));
        Hessian2Output out = new Hessian2Output(bytes);
        out.setSerializerFactory(FACTORY);
        out.startReply();
        out.writeObject(value);
        out.completeReply();
        out.flush();
        return bytes.toByteArray();
    }

    static byte[] fault(String message) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
        Hessian2Output out = new Hessian2Output(bytes);
        out.writeFault("ServiceException", message, null);
        out.flush();
        return bytes.toByteArray();
    }

    /** The reply's value; a fault becomes a {@link io.ehrelay.internal.rpc.RpcException} with its message. */
    static Object readReply(byte[] body) throws IOException {
        Hessian2Input in = replyInput(body);
        try {
            return in.readReply(Object.class);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new RpcException(t.getMessage() == null ? t.toString() : t.getMessage());
        }
    }

    /** A reply carrying a byte array (or null), read in bulk; a fault as in {@link #readReply(byte[])}. */
    static byte[] readBinaryReply(byte[] body) throws IOException {
        Hessian2Input in = replyInput(body);
        if (in.read() != 'R') {
            Object value = readReply(body); // a fault throws here
            throw new RpcException("expected a binary reply, got " + value);
        }
        try {
            InputStream binary = in.readInputStream();
            return binary == null ? null : Streams.readUpTo(binary, Integer.MAX_VALUE);
        } catch (RuntimeException e) {
            throw new IOException("not a binary reply: " + e, e);
        }
    }

    private static Hessian2Input replyInput(byte[] body) {
        // a Hessian 2 reply starts with the version header 'H' 2 0, which the input expects read already
        int skip = body.length >= 3 && body[0] == 'H' ? 3 : 0;
        Hessian2Input in = new Hessian2Input(new ByteArrayInputStream(body, skip, body.length - skip));
        in.setSerializerFactory(FACTORY);
        return in;
    }
}
