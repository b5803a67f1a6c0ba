package io.ehrelay.internal.codec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.spi.MalformedFrameException;

/**
 * What {@link SerialStreamCheck} (a whole frame) and {@link SerialStreamWalker} (a stream as it arrives) share:
 * the stream protocol's constants (Java Object Serialization Specification, chapter 6) and the limits of one
 * serialization stream — its handles, the nesting depth, the objects and references, the hashing work — counted
 * against {@link CodecLimits}. Not thread-safe: one instance per stream.
 */
final class SerialBudget {

    static final int TC_NULL = 0x70;
    static final int TC_REFERENCE = 0x71;
    static final int TC_CLASSDESC = 0x72;
    static final int TC_OBJECT = 0x73;
    static final int TC_STRING = 0x74;
    static final int TC_ARRAY = 0x75;
    static final int TC_CLASS = 0x76;
    static final int TC_BLOCKDATA = 0x77;
    static final int TC_ENDBLOCKDATA = 0x78;
    static final int TC_RESET = 0x79;
    static final int TC_BLOCKDATALONG = 0x7A;
    static final int TC_LONGSTRING = 0x7C;
    static final int TC_PROXYCLASSDESC = 0x7D;
    static final int TC_ENUM = 0x7E;
    static final int BASE_HANDLE = 0x7E0000;
    static final int SC_WRITE_METHOD = 0x01;
    static final int SC_SERIALIZABLE = 0x02;
    static final int SC_EXTERNALIZABLE = 0x04;
    static final int SC_BLOCK_DATA = 0x08;
    /** The longest chain of superclass descriptors accepted (also stops a descriptor naming itself). */
    static final int MAX_HIERARCHY = 64;
    /** Reaches beyond this are all alike (refused anyway); keeps the sums from overflowing. */
    static final long REACH_CAP = 1L << 60;
    /** Marks a handle that is a string, enum constant or class: reach 1. */
    static final Object OTHER = new Object();
    /** The classes whose deserialization hashes what they hold (and their subclasses, through the hierarchy). */
    static final Set<String> HASHED = new HashSet<>(Arrays.asList(
            "java.util.HashMap", "java.util.HashSet", "java.util.LinkedHashMap", "java.util.LinkedHashSet",
            "java.util.Hashtable", "java.util.concurrent.ConcurrentHashMap"));

    /** An object's or array's handle: its reach once the walk has left it. */
    static final class Node {
        long reach;
        boolean done;
    }

    private final CodecLimits limits;
    private final String what;
    private final List<Object> handles = new ArrayList<>();
    private int depth;
    private long references;
    private long hashWork;

    SerialBudget(CodecLimits limits, String what) {
        this.limits = limits;
        this.what = what;
    }

    /** One level deeper into the object graph. */
    void enter() throws RejectedClassException {
        if (++depth > limits.maxDepth()) {
            throw new RejectedClassException(null, "object graph deeper than maxObjectDepth=" + limits.maxDepth()
                    + " in " + what);
        }
    }

    void leave() {
        depth--;
    }

    /** A new object, string, class or descriptor takes the next handle. */
    void newHandle(Object h) throws RejectedClassException {
        handles.add(h);
        countReference();
    }

    void countReference() throws RejectedClassException {
        if (++references > limits.maxReferences()) {
            throw new RejectedClassException(null, "more than maxObjectReferences=" + limits.maxReferences()
                    + " references in " + what);
        }
    }

    /** What the handle number {@code raw} (as the stream has it) refers to. */
    Object handle(long raw) throws MalformedFrameException {
        long h = raw - BASE_HANDLE;
        if (h < 0 || h >= handles.size()) {
            throw malformed("reference to unknown handle");
        }
        return handles.get((int) h);
    }

    /** The stream reset its handles (allowed between top-level contents). */
    void reset() {
        handles.clear();
    }

    void checkArrayLength(int length) throws MalformedFrameException {
        if (length < 0) {
            throw malformed("array of negative length " + length);
        }
        if (length > limits.maxArrayLength()) {
            throw new RejectedClassException(null, "array of " + length + " elements exceeds maxArrayLength="
                    + limits.maxArrayLength() + " in " + what);
        }
    }

    /** The JDK will hash objects of this much reach while reading a hash-based collection. */
    void chargeHashing(long reach) throws RejectedClassException {
        hashWork = plus(hashWork, reach);
        if (hashWork > limits.maxHashWork()) {
            throw new RejectedClassException(null, "hash-based collections whose reading would hash more than "
                    + "maxHashWork=" + limits.maxHashWork() + " objects (collections sharing each other's "
                    + "members, a nested-set bomb) in " + what);
        }
    }

    static long plus(long a, long b) {
        return Math.min(a + b, REACH_CAP);
    }

    /** The bytes of a primitive field or array element of this type code; 0 for objects and arrays. */
    static int primitiveSize(int typeCode) {
        switch (typeCode) {
            case 'B': case 'Z': return 1;
            case 'C': case 'S': return 2;
            case 'I': case 'F': return 4;
            case 'J': case 'D': return 8;
            default: return 0;
        }
    }

    MalformedFrameException malformed(String why) {
        return new MalformedFrameException("cannot deserialize " + what + ": " + why);
    }
}
