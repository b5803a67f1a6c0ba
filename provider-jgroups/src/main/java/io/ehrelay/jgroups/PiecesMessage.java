package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.function.Supplier;

import io.ehrelay.spi.Batch;
import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.Message;

/**
 * A batch posted to a member as the arrays it is made of ({@link Batch#pieces()}): the elements' own value arrays
 * and one array of every other byte, written one after the other. On the wire it is a {@link BytesMessage} whose
 * array is the whole batch (same type, same bytes), so the member reads it as any other. JGroups keeps a sent
 * message until the member acknowledges it (UNICAST3): kept this way, a batch holds the values the cache holds
 * anyway, instead of a copy of each. Sending side only; never read ({@link #readPayload} refuses).
 */
final class PiecesMessage extends BytesMessage {

    private Batch.Pieces pieces;

    /** For {@link #create()} (a copy JGroups makes); the pieces follow in {@link #copyPayload}. */
    PiecesMessage() {
    }

    PiecesMessage(Address dest, Batch.Pieces pieces) {
        super(dest);
        this.pieces = pieces;
    }

    @Override
    public Supplier<Message> create() {
        return PiecesMessage::new;
    }

    @Override
    protected Message copyPayload(Message copy) {
        if (copy instanceof PiecesMessage) {
            ((PiecesMessage) copy).pieces = pieces;
            return copy;
        }
        return copy.setArray(bytes(), 0, pieces.length());
    }

    @Override
    public boolean hasPayload() {
        return true;
    }

    /** No single array: fragmenting protocols (FRAG4) then write the message whole, slice by slice. */
    @Override
    public boolean hasArray() {
        return false;
    }

    @Override
    public int getOffset() {
        return 0;
    }

    @Override
    public int getLength() {
        return pieces.length();
    }

    /** The batch in one array, a copy (for a caller that insists on an array; JGroups' send path does not). */
    @Override
    public byte[] getArray() {
        return bytes();
    }

    private byte[] bytes() {
        byte[] out = new byte[pieces.length()];
        int at = 0;
        for (int i = 0; i < pieces.count(); i++) {
            System.arraycopy(pieces.array(i), pieces.offset(i), out, at, pieces.length(i));
            at += pieces.length(i);
        }
        return out;
    }

    /** As a {@link BytesMessage} with an array counts its length (which its size without one already counts). */
    @Override
    public int size() {
        return super.size() + pieces.length();
    }

    @Override
    public void writePayload(DataOutput out) throws IOException {
        out.writeInt(pieces.length());
        for (int i = 0; i < pieces.count(); i++) {
            out.write(pieces.array(i), pieces.offset(i), pieces.length(i));
        }
    }

    @Override
    public void readPayload(DataInput in) {
        throw new UnsupportedOperationException("a PiecesMessage is only sent; it is read as a BytesMessage");
    }

    @Override
    public String toString() {
        return super.toString() + " (" + pieces.count() + " pieces, " + pieces.length() + " bytes)";
    }
}
