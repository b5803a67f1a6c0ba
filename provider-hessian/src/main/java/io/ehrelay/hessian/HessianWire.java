package io.ehrelay.hessian;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

import com.caucho.hessian.io.Hessian2Input;
import com.caucho.hessian.io.Hessian2Output;
import com.caucho.hessian.io.SerializerFactory;

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

    static byte[] call(String method, Envelope envelope) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(
                256 + (envelope.payload == null ? 0 : envelope.payload.length));
        Hessian2Output out = new Hessian2Output(bytes);
        out.setSerializerFactory(FACTORY);
        out.startCall(method, 1);
        out.writeObject(envelope);
        out.completeCall();
        out.flush();
        return bytes.toByteArray();
    }

    /** A call as the server reads it. */
    static final class Call {
        final String method;
        final Object argument;

        Call(String method, Object argument) {
            this.method = method;
            this.argument = argument;
        }
    }

    /** @throws IOException when the bytes are not a Hessian 2 call with one argument */
    static Call readCall(byte[] body) throws IOException {
        Hessian2Input in = new Hessian2Input(new ByteArrayInputStream(body));
        in.setSerializerFactory(FACTORY);
        try {
            in.readCall();
            String method = in.readMethod();
            int args = in.readMethodArgLength();
            if (args != 1) {
                throw new IOException("expected one argument, got " + args);
            }
            Object argument = in.readObject();
            in.completeCall();
            return new Call(method, argument);
        } catch (RuntimeException e) {
            throw new IOException("not a Hessian call: " + e, e);
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

    /** The reply's value; a fault becomes a {@link io.ehrelay.relay.RelayException} with its message. */
    static Object readReply(byte[] body) throws IOException {
        // a Hessian 2 reply starts with the version header 'H' 2 0, which the input expects read already
        int skip = body.length >= 3 && body[0] == 'H' ? 3 : 0;
        Hessian2Input in = new Hessian2Input(new ByteArrayInputStream(body, skip, body.length - skip));
        in.setSerializerFactory(FACTORY);
        try {
            return in.readReply(Object.class);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new io.ehrelay.relay.RelayException(t.getMessage() == null ? t.toString() : t.getMessage());
        }
    }
}
