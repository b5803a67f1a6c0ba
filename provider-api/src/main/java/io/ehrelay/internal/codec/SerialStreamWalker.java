package io.ehrelay.internal.codec;

import static io.ehrelay.internal.codec.SerialBudget.OTHER;
import static io.ehrelay.internal.codec.SerialBudget.SC_BLOCK_DATA;
import static io.ehrelay.internal.codec.SerialBudget.SC_EXTERNALIZABLE;
import static io.ehrelay.internal.codec.SerialBudget.SC_SERIALIZABLE;
import static io.ehrelay.internal.codec.SerialBudget.SC_WRITE_METHOD;
import static io.ehrelay.internal.codec.SerialBudget.TC_ARRAY;
import static io.ehrelay.internal.codec.SerialBudget.TC_BLOCKDATA;
import static io.ehrelay.internal.codec.SerialBudget.TC_BLOCKDATALONG;
import static io.ehrelay.internal.codec.SerialBudget.TC_CLASS;
import static io.ehrelay.internal.codec.SerialBudget.TC_CLASSDESC;
import static io.ehrelay.internal.codec.SerialBudget.TC_ENDBLOCKDATA;
import static io.ehrelay.internal.codec.SerialBudget.TC_ENUM;
import static io.ehrelay.internal.codec.SerialBudget.TC_LONGSTRING;
import static io.ehrelay.internal.codec.SerialBudget.TC_NULL;
import static io.ehrelay.internal.codec.SerialBudget.TC_OBJECT;
import static io.ehrelay.internal.codec.SerialBudget.TC_PROXYCLASSDESC;
import static io.ehrelay.internal.codec.SerialBudget.TC_REFERENCE;
import static io.ehrelay.internal.codec.SerialBudget.TC_RESET;
import static io.ehrelay.internal.codec.SerialBudget.TC_STRING;
import static io.ehrelay.internal.codec.SerialBudget.plus;
import static io.ehrelay.internal.codec.SerialBudget.primitiveSize;

import java.io.IOException;
import java.util.ArrayDeque;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.internal.codec.ClassDescReader.ClassDesc;
import io.ehrelay.spi.MalformedFrameException;

/**
 * {@link SerialStreamCheck}'s limits for a serialization stream the JDK reads as it arrives (RMI's calls): walked
 * one token ahead of the JDK's reader, so every byte it gets was checked, and creating no object. Class names are
 * left to the JDK's filter. Hashing is charged as each member of a hash-based collection completes, so large
 * values stream through without being held (docs/reliability.md, "Hostile bytes"). Not thread-safe: one
 * instance per stream.
 */
public final class SerialStreamWalker {

    /** Where the walker reads: blocking reads of what the stream holds next. */
    public interface Input {
        /** The next byte, waiting for it; -1 at the end of the stream. */
        int peek() throws IOException;

        /** The next {@code n} bytes (at most 8) as a big-endian number, waiting for them. */
        long read(int n) throws IOException;

        /** Skips at least one and at most {@code n} bytes, those at hand (waiting only for the first); returns how many. */
        long skipSome(long n) throws IOException;
    }

    /** What is being walked, innermost last: an object (class by class), an array, or bytes to pass. */
    private static final class Frame {
        static final int OBJECT = 0;
        static final int ARRAY = 1;
        static final int BYTES = 2;
        final int kind;
        final SerialBudget.Node node;
        /** The object's classes, the topmost superclass first. */
        ClassDesc[] chain;
        int classIndex = -1;
        /** Per class: 0 primitive fields to pass, 1 object fields, 2 its writeObject data, 3 done. */
        int phase;
        int left;
        long bytesLeft;
        long reach;
        boolean hashed;

        Frame(int kind, SerialBudget.Node node) {
            this.kind = kind;
            this.node = node;
        }
    }

    private final Input in;
    private final SerialBudget budget;
    private final ArrayDeque<Frame> frames = new ArrayDeque<>();
    private final ClassDescReader descs;

    public SerialStreamWalker(Input in, CodecLimits limits, String what) {
        this.in = in;
        this.budget = new SerialBudget(limits, what);
        this.descs = new ClassDescReader(in, budget);
    }

    /**
     * Walks the next token of the stream: part of an object, or a whole small item (a class descriptor, a
     * reference, a string's header). The bytes walked may then be handed to the reader.
     *
     * @return false when, outside any object, the next byte starts no content (the stream's contents ended
     *         there; that byte is not consumed)
     * @throws RejectedClassException when a limit refuses the stream
     * @throws MalformedFrameException when it is not a well-formed stream
     */
    public boolean step() throws IOException, MalformedFrameException {
        Frame f = frames.peekLast();
        if (f == null) {
            int tc = in.peek();
            if (tc == TC_RESET) {
                in.read(1);
                budget.reset();
                return true;
            }
            if (tc < TC_NULL || tc > TC_ENUM) {
                return false;
            }
            in.read(1);
            startContent(tc, true);
            return true;
        }
        switch (f.kind) {
            case Frame.BYTES: {
                f.bytesLeft -= in.skipSome(f.bytesLeft);
                if (f.bytesLeft == 0) {
                    frames.removeLast();
                    completed(f.reach);
                }
                return true;
            }
            case Frame.ARRAY:
                if (f.left == 0) {
                    finish(f);
                } else {
                    f.left--;
                    startContent(typeCode(), false);
                }
                return true;
            default:
                objectStep(f);
                return true;
        }
    }

    /** Whether the walk is outside any object (between top-level contents). */
    public boolean atTopLevel() {
        return frames.isEmpty();
    }

    private void objectStep(Frame f) throws IOException, MalformedFrameException {
        if (f.classIndex < 0 || f.phase == 3) {
            f.classIndex++;
            if (f.classIndex == f.chain.length) {
                finish(f);
                return;
            }
            ClassDesc d = f.chain[f.classIndex];
            if ((d.flags & SC_EXTERNALIZABLE) != 0) {
                if ((d.flags & SC_BLOCK_DATA) == 0) {
                    throw malformed("externalizable " + d.name + " in stream protocol version 1");
                }
                f.phase = 2;
            } else if ((d.flags & SC_SERIALIZABLE) != 0) {
                f.phase = 0;
                f.left = d.objectFields;
                if (d.primitiveBytes > 0) {
                    frames.addLast(bytes(d.primitiveBytes, 0));
                }
                f.phase = 1;
            } else if (d.primitiveBytes != 0 || d.objectFields != 0) {
                throw malformed("fields of " + d.name + ", which is not serializable");
            } else {
                f.phase = 3;
            }
            return;
        }
        ClassDesc d = f.chain[f.classIndex];
        if (f.phase == 1) {
            if (f.left > 0) {
                f.left--;
                startContent(typeCode(), false);
                return;
            }
            f.phase = (d.flags & SC_WRITE_METHOD) != 0 ? 2 : 3;
            return;
        }
        // phase 2: the class's own data (writeObject, writeExternal): contents up to the end marker
        int tc = typeCode();
        if (tc == TC_ENDBLOCKDATA) {
            f.phase = 3;
            return;
        }
        startContent(tc, true);
    }

    /** One item of content that starts with type code {@code tc} (already read). */
    private void startContent(int tc, boolean blockDataAllowed) throws IOException, MalformedFrameException {
        switch (tc) {
            case TC_NULL:
                completed(0);
                return;
            case TC_REFERENCE: {
                Object h = handle();
                countReference();
                completed(h instanceof SerialBudget.Node && ((SerialBudget.Node) h).done ? ((SerialBudget.Node) h).reach : 1);
                return;
            }
            case TC_OBJECT: {
                ClassDesc desc = descs.read();
                if (desc == null) {
                    throw malformed("object without a class");
                }
                SerialBudget.Node node = new SerialBudget.Node();
                newHandle(node);
                enter();
                Frame f = new Frame(Frame.OBJECT, node);
                f.chain = descs.hierarchy(desc);
                f.hashed = desc.hashed;
                f.reach = 1;
                frames.addLast(f);
                return;
            }
            case TC_ARRAY: {
                ClassDesc desc = descs.read();
                if (desc == null || desc.name.length() < 2 || desc.name.charAt(0) != '[') {
                    throw malformed("array of a class that is not an array type");
                }
                SerialBudget.Node node = new SerialBudget.Node();
                newHandle(node);
                int length = (int) in.read(4);
                budget.checkArrayLength(length);
                int elementBytes = primitiveSize(desc.name.charAt(1));
                if (elementBytes > 0) {
                    node.reach = 1;
                    node.done = true;
                    frames.addLast(bytes((long) length * elementBytes, 1));
                    if (length == 0) {
                        frames.removeLast();
                        completed(1);
                    }
                    return;
                }
                enter();
                Frame f = new Frame(Frame.ARRAY, node);
                f.left = length;
                f.reach = 1;
                frames.addLast(f);
                return;
            }
            case TC_STRING:
            case TC_LONGSTRING: {
                long n = tc == TC_STRING ? in.read(2) : in.read(8);
                if (n < 0) {
                    throw malformed("string of " + n + " bytes");
                }
                newHandle(OTHER);
                passBytes(n, 1);
                return;
            }
            case TC_ENUM:
                descs.read();
                newHandle(OTHER);
                descs.stringObject(typeCode(), "enum constant name");
                completed(1);
                return;
            case TC_CLASS:
                descs.read();
                newHandle(OTHER);
                completed(1);
                return;
            case TC_CLASSDESC:
            case TC_PROXYCLASSDESC:
                descs.read(tc);
                completed(1);
                return;
            case TC_BLOCKDATA:
            case TC_BLOCKDATALONG: {
                if (!blockDataAllowed) {
                    throw malformed("block data where an object belongs");
                }
                long n = tc == TC_BLOCKDATA ? in.read(1) : (int) in.read(4);
                if (n < 0) {
                    throw malformed("block data of " + n + " bytes");
                }
                passBytes(n, 0);
                return;
            }
            default:
                throw malformed(String.format("unexpected type code 0x%02x", tc));
        }
    }

    private void passBytes(long n, long reach) throws IOException, MalformedFrameException {
        if (n == 0) {
            completed(reach);
        } else {
            frames.addLast(bytes(n, reach));
        }
    }

    private static Frame bytes(long n, long reach) {
        Frame f = new Frame(Frame.BYTES, null);
        f.bytesLeft = n;
        f.reach = reach;
        return f;
    }

    /** An object or array read to its end: its reach is known, and counts for what holds it. */
    private void finish(Frame f) throws RejectedClassException {
        frames.removeLast();
        budget.leave();
        f.node.reach = f.reach;
        f.node.done = true;
        completed(f.reach);
    }

    /**
     * A content item of reach {@code reach} is complete: it counts for what holds it; inside a hash-based
     * collection, the JDK hashes it now, so its reach is charged now.
     */
    private void completed(long reach) throws RejectedClassException {
        Frame holder = frames.peekLast();
        if (holder == null || holder.kind == Frame.BYTES) {
            return;
        }
        holder.reach = plus(holder.reach, reach);
        if (holder.hashed) {
            budget.chargeHashing(reach);
        }
    }

    private void enter() throws RejectedClassException {
        budget.enter();
    }

    private void newHandle(Object h) throws RejectedClassException {
        budget.newHandle(h);
    }

    private void countReference() throws RejectedClassException {
        budget.countReference();
    }

    private Object handle() throws IOException, MalformedFrameException {
        return budget.handle(in.read(4));
    }

    private int typeCode() throws IOException {
        return (int) in.read(1);
    }

    private MalformedFrameException malformed(String why) {
        return budget.malformed(why);
    }

}
