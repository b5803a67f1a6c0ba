package io.ehrelay.internal.codec;

import static io.ehrelay.internal.codec.SerialBudget.HASHED;
import static io.ehrelay.internal.codec.SerialBudget.MAX_HIERARCHY;
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
import static io.ehrelay.internal.codec.SerialBudget.TC_STRING;
import static io.ehrelay.internal.codec.SerialBudget.plus;
import static io.ehrelay.internal.codec.SerialBudget.primitiveSize;

import java.util.ArrayList;
import java.util.List;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.spi.MalformedFrameException;

/**
 * Walks a Java serialization stream (Java Object Serialization Specification, chapter 6) without creating any
 * object from it, and refuses it before the JDK reads it when it breaks a limit of {@link CodecLimits}: nesting
 * depth, an array's length, objects and references, the hashing work of hash-based collections
 * ({@code maxHashWork}, summed as each object's <i>reach</i>), or a class outside the allow-list. How the reach is
 * counted and what a stream must look like: docs/reliability.md, "How a serialized value is checked before the
 * JDK reads it". Not thread-safe: one instance per stream.
 */
final class SerialStreamCheck {

    private static final int STREAM_MAGIC = 0xACED;
    private static final int STREAM_VERSION = 5;

    /** A parsed class descriptor: what is needed to walk an instance's data. */
    private static final class ClassDesc {
        final String name;
        int flags;
        int primitiveBytes;
        int objectFields;
        ClassDesc superDesc;

        ClassDesc(String name) {
            this.name = name;
        }
    }

    private final ByteSource in;
    private final CodecLimits limits;
    private final String what;
    private final SerialBudget budget;

    private SerialStreamCheck(byte[] buf, int off, int len, CodecLimits limits, String what) {
        this.in = new ByteSource(buf, off, len);
        this.limits = limits;
        this.what = what;
        this.budget = new SerialBudget(limits, what);
    }

    /**
     * Checks one serialized object in {@code buf[off, off+len)}: exactly one top-level object and nothing after it.
     *
     * @throws RejectedClassException when a limit or the allow-list refuses it
     * @throws MalformedFrameException when it is not a well-formed stream of one object
     */
    static void check(byte[] buf, int off, int len, CodecLimits limits, String what) throws MalformedFrameException {
        SerialStreamCheck c = new SerialStreamCheck(buf, off, len, limits, what);
        try {
            if (c.in.readShort(what) != STREAM_MAGIC || c.in.readShort(what) != STREAM_VERSION) {
                throw c.malformed("not a Java serialization stream");
            }
            c.content(c.typeCode(), false);
            if (c.in.remaining() != 0) {
                throw c.malformed(c.in.remaining() + " bytes after the serialized object");
            }
        } catch (StackOverflowError e) {
            throw c.malformed("nesting too deep to check");
        }
    }

    /**
     * One object (or, where {@code blockDataAllowed}, one block of data) that starts with type code {@code tc}.
     *
     * @return its reach: the objects hashing it would visit (0 for null and block data)
     */
    private long content(int tc, boolean blockDataAllowed) throws MalformedFrameException {
        switch (tc) {
            case TC_NULL:
                return 0;
            case TC_REFERENCE: {
                Object h = handle();
                countReference();
                return h instanceof SerialBudget.Node && ((SerialBudget.Node) h).done
                        ? ((SerialBudget.Node) h).reach : 1;
            }
            case TC_OBJECT:
                return object();
            case TC_ARRAY:
                return array();
            case TC_STRING:
            case TC_LONGSTRING:
                string(tc, "string");
                return 1;
            case TC_ENUM:
                classDesc();
                newHandle(OTHER);
                stringObject(typeCode(), "enum constant name");
                return 1;
            case TC_CLASS:
                classDesc();
                newHandle(OTHER);
                return 1;
            case TC_CLASSDESC:
            case TC_PROXYCLASSDESC:
                classDesc(tc);
                return 1;
            case TC_BLOCKDATA:
            case TC_BLOCKDATALONG:
                if (!blockDataAllowed) {
                    throw malformed("block data where an object belongs");
                }
                in.skip(tc == TC_BLOCKDATA ? in.readByte(what) : in.readInt(what), what);
                return 0;
            default:
                throw malformed(String.format("unexpected type code 0x%02x", tc));
        }
    }

    private long object() throws MalformedFrameException {
        ClassDesc desc = classDesc();
        if (desc == null) {
            throw malformed("object without a class");
        }
        SerialBudget.Node node = new SerialBudget.Node();
        newHandle(node);
        enter();
        long reach = 1;
        boolean hashed = false;
        ClassDesc[] chain = hierarchy(desc);
        for (int i = chain.length - 1; i >= 0; i--) {
            ClassDesc d = chain[i];
            hashed |= HASHED.contains(d.name);
            if ((d.flags & SC_EXTERNALIZABLE) != 0) {
                if ((d.flags & SC_BLOCK_DATA) == 0) {
                    throw malformed("externalizable " + d.name + " in stream protocol version 1");
                }
                reach = plus(reach, annotation());
            } else if ((d.flags & SC_SERIALIZABLE) != 0) {
                in.skip(d.primitiveBytes, what);
                for (int f = 0; f < d.objectFields; f++) {
                    reach = plus(reach, content(typeCode(), false));
                }
                if ((d.flags & SC_WRITE_METHOD) != 0) {
                    reach = plus(reach, annotation());
                }
            } else if (d.primitiveBytes != 0 || d.objectFields != 0) {
                throw malformed("fields of " + d.name + ", which is not serializable");
            }
        }
        budget.leave();
        node.reach = reach;
        node.done = true;
        if (hashed) {
            budget.chargeHashing(reach);
        }
        return reach;
    }

    private long array() throws MalformedFrameException {
        ClassDesc desc = classDesc();
        if (desc == null || desc.name.length() < 2 || desc.name.charAt(0) != '[') {
            throw malformed("array of a class that is not an array type");
        }
        SerialBudget.Node node = new SerialBudget.Node();
        newHandle(node);
        int length = in.readInt(what);
        budget.checkArrayLength(length);
        int elementBytes = primitiveSize(desc.name.charAt(1));
        if (elementBytes > 0) {
            if ((long) length * elementBytes > in.remaining()) {
                throw malformed("array of " + length + " elements past the end of the stream");
            }
            in.skip(length * elementBytes, what);
            node.reach = 1;
            node.done = true;
            return 1;
        }
        if (length > in.remaining()) { // every element takes at least one byte
            throw malformed("array of " + length + " elements past the end of the stream");
        }
        enter();
        long reach = 1;
        for (int i = 0; i < length; i++) {
            reach = plus(reach, content(typeCode(), false));
        }
        budget.leave();
        node.reach = reach;
        node.done = true;
        return reach;
    }

    /** A class descriptor (new, proxy, a reference to an earlier one, or null). */
    private ClassDesc classDesc() throws MalformedFrameException {
        return classDesc(typeCode());
    }

    /** A class descriptor that starts with type code {@code tc}. */
    private ClassDesc classDesc(int tc) throws MalformedFrameException {
        switch (tc) {
            case TC_NULL:
                return null;
            case TC_REFERENCE: {
                Object h = handle();
                if (!(h instanceof ClassDesc)) {
                    throw malformed("reference to something other than a class descriptor");
                }
                countReference();
                return (ClassDesc) h;
            }
            case TC_CLASSDESC: {
                String name = in.readUtf8(in.readShort(what), what);
                checkClassName(name);
                in.skip(8, what);
                ClassDesc d = new ClassDesc(name);
                newHandle(d);
                d.flags = in.readByte(what);
                if ((d.flags & SC_SERIALIZABLE) != 0 && (d.flags & SC_EXTERNALIZABLE) != 0) {
                    throw malformed("class " + name + " both serializable and externalizable");
                }
                int fields = in.readShort(what);
                boolean objects = false;
                for (int i = 0; i < fields; i++) {
                    int type = in.readByte(what);
                    in.skip(in.readShort(what), what);
                    int size = primitiveSize(type);
                    if (size > 0) {
                        if (objects) {
                            throw malformed("primitive field after an object field in " + name);
                        }
                        d.primitiveBytes += size;
                    } else if (type == 'L' || type == '[') {
                        objects = true;
                        d.objectFields++;
                        stringObject(typeCode(), "field type");
                    } else {
                        throw malformed(String.format("field type code 0x%02x in %s", type, name));
                    }
                }
                annotation();
                d.superDesc = classDesc();
                return d;
            }
            case TC_PROXYCLASSDESC:
                // the guarded stream refuses every dynamic proxy; refuse it here already
                throw new RejectedClassException("java.lang.reflect.Proxy",
                        "dynamic proxy classes are never deserialized (" + what + ")");
            default:
                throw malformed(String.format("unexpected type code 0x%02x where a class descriptor belongs", tc));
        }
    }

    /**
     * A class's or object's annotation: contents (objects and block data) up to the end-of-block marker.
     *
     * @return the reach of the objects in it
     */
    private long annotation() throws MalformedFrameException {
        long reach = 0;
        for (int tc = typeCode(); tc != TC_ENDBLOCKDATA; tc = typeCode()) {
            reach = plus(reach, content(tc, true));
        }
        return reach;
    }

    /** A new string (after its type code {@code tc}: short or long form), skipped; it takes a handle. */
    private void string(int tc, String role) throws MalformedFrameException {
        if (tc == TC_STRING) {
            in.skip(in.readShort(what), what);
        } else {
            long n = in.readLong(what);
            if (n < 0 || n > in.remaining()) {
                throw malformed(role + " of " + n + " bytes past the end");
            }
            in.skip((int) n, what);
        }
        newHandle(OTHER);
    }

    /** A string object (a field's type or an enum constant's name) starting with {@code tc}: new or a reference. */
    private void stringObject(int tc, String role) throws MalformedFrameException {
        if (tc == TC_STRING || tc == TC_LONGSTRING) {
            string(tc, role);
        } else if (tc == TC_REFERENCE) {
            handle();
            countReference();
        } else {
            throw malformed(String.format("unexpected type code 0x%02x for the %s", tc, role));
        }
    }

    private ClassDesc[] hierarchy(ClassDesc desc) throws MalformedFrameException {
        List<ClassDesc> chain = new ArrayList<>();
        for (ClassDesc d = desc; d != null; d = d.superDesc) {
            if (chain.size() == MAX_HIERARCHY) {
                throw malformed("class hierarchy of " + desc.name + " deeper than " + MAX_HIERARCHY);
            }
            chain.add(d);
        }
        return chain.toArray(new ClassDesc[0]);
    }

    private void checkClassName(String name) throws RejectedClassException {
        String component = SerializationGuard.componentClassName(name);
        if (component != null && !limits.allowList().allows(component)) {
            throw new RejectedClassException(component, SerializationGuard.notAllowedMessage(component));
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

    private Object handle() throws MalformedFrameException {
        return budget.handle(in.readInt(what) & 0xffffffffL);
    }

    private int typeCode() throws MalformedFrameException {
        return in.readByte(what);
    }

    private MalformedFrameException malformed(String why) {
        return budget.malformed(why);
    }

}
