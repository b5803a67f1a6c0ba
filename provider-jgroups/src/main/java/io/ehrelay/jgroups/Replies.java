package io.ehrelay.jgroups;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import io.ehrelay.internal.rpc.RpcException;

/**
 * Replies to relay calls as plain bytes (never Java-serialized objects): a status byte, then the value or the
 * error message.
 */
final class Replies {

    private static final byte NONE = 0;
    private static final byte VALUE = 1;
    private static final byte ERROR = 2;

    static final byte[] OK = {NONE};

    private Replies() {
    }

    static byte[] value(byte[] value) {
        if (value == null) {
            return OK;
        }
        byte[] r = new byte[value.length + 1];
        r[0] = VALUE;
        System.arraycopy(value, 0, r, 1, value.length);
        return r;
    }

    static byte[] value(long value) {
        return value(ByteBuffer.allocate(8).putLong(value).array());
    }

    static byte[] error(String message) {
        byte[] text = String.valueOf(message).getBytes(StandardCharsets.UTF_8);
        byte[] r = new byte[text.length + 1];
        r[0] = ERROR;
        System.arraycopy(text, 0, r, 1, text.length);
        return r;
    }

    /**
     * @return the value, or {@code null} for a reply without one
     * @throws RpcException for an error reply or anything that is not a reply
     */
    static byte[] read(Object reply, String peer) throws RpcException {
        if (!(reply instanceof byte[]) || ((byte[]) reply).length == 0) {
            throw new RpcException("member " + peer + " answered "
                    + (reply == null ? "nothing" : reply.getClass().getSimpleName()) + " instead of an ehrelay reply");
        }
        byte[] r = (byte[]) reply;
        switch (r[0]) {
            case NONE:
                return null;
            case VALUE:
                return Arrays.copyOfRange(r, 1, r.length);
            case ERROR:
                throw new RpcException(new String(r, 1, r.length - 1, StandardCharsets.UTF_8));
            default:
                throw new RpcException("member " + peer + " answered an unknown reply status " + r[0]);
        }
    }

    static long readLong(Object reply, String peer) throws RpcException {
        byte[] v = read(reply, peer);
        if (v == null || v.length != 8) {
            throw new RpcException("member " + peer + " answered no number");
        }
        return ByteBuffer.wrap(v).getLong();
    }
}
