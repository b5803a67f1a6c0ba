package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;

import org.jgroups.Header;

/**
 * The relay call a JGroups message carries: which call, and its small arguments (cache name, transfer id, chunk
 * size). The batch itself is the message's byte payload, so JGroups sends it without a copy on this side.
 * Public because JGroups creates headers by their magic id.
 */
public final class CallHeader extends Header {

    /** Magic id of this header class, and the protocol id it is stored under in a message. */
    static final short ID = 5071;

    static final byte HELLO = 1;
    static final byte DELIVER = 2;
    static final byte POST = 3;
    static final byte OPEN_STATE = 4;
    static final byte NEXT_STATE = 5;

    private static final int MAX_NAME_BYTES = 64 * 1024;

    byte op;
    String cacheName;
    long transferId;
    int maxChunkBytes;

    public CallHeader() {
    }

    CallHeader(byte op) {
        this.op = op;
    }

    @Override
    public short getMagicId() {
        return ID;
    }

    @Override
    public Supplier<? extends Header> create() {
        return CallHeader::new;
    }

    private byte[] nameBytes() {
        return cacheName == null ? null : cacheName.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public int serializedSize() {
        byte[] name = nameBytes();
        return 1 + 4 + (name == null ? 0 : name.length) + 8 + 4;
    }

    @Override
    public void writeTo(DataOutput out) throws IOException {
        out.writeByte(op);
        byte[] name = nameBytes();
        out.writeInt(name == null ? -1 : name.length);
        if (name != null) {
            out.write(name);
        }
        out.writeLong(transferId);
        out.writeInt(maxChunkBytes);
    }

    @Override
    public void readFrom(DataInput in) throws IOException {
        op = in.readByte();
        int length = in.readInt();
        if (length > MAX_NAME_BYTES || length < -1) {
            throw new IOException("relay header announces a cache name of " + length + " bytes");
        }
        if (length >= 0) {
            byte[] name = new byte[length];
            in.readFully(name);
            cacheName = new String(name, StandardCharsets.UTF_8);
        }
        transferId = in.readLong();
        maxChunkBytes = in.readInt();
    }

    @Override
    public String toString() {
        return "[CallHeader op=" + op + (cacheName == null ? "" : " cache=" + cacheName) + "]";
    }
}
