package io.ehrelay.internal.codec;

import java.util.ArrayList;
import java.util.List;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.spi.MalformedFrameException;

/**
 * Walks a Java serialization stream (Java Object Serialization Specification, chapter 6 "Object Serialization
 * Stream Protocol") without creating any object from it, and refuses it before the JDK reads it when it breaks
 * a limit of {@link CodecLimits}: the nesting depth, the length of an array, the number of objects and
 * references, or a class outside the allow-list. It is the same code on every Java version: Java 8 has no
 * {@code java.io.ObjectInputFilter}, and the JDK's own reader allocates an array as long as the stream claims
 * before reading any element of it.
 *
 * <p>What it needs from the stream, as the specification requires of every {@code writeObject} method (section
 * 2.3): a class with its own {@code writeObject} writes its fields first ({@code defaultWriteObject} or
 * {@code writeFields}), then optional data; externalizable classes use block-data mode (protocol version 2, the
 * default since Java 1.2). A stream that does not parse this way is refused as malformed.
 *
 * <p>The class names it sees are checked against the allow-list too, but the authoritative check is
 * {@code resolveClass} of the guarded stream that reads the value afterwards (it sees exactly what the JDK
 * resolves). Not thread-safe: one instance per stream.
 */
final class SerialStreamCheck {

    private static final int STREAM_MAGIC = 0xACED;
    private static final int STREAM_VERSION = 5;
    private static final int TC_NULL = 0x70;
    private static final int TC_REFERENCE = 0x71;
    private static final int TC_CLASSDESC = 0x72;
    private static final int TC_OBJECT = 0x73;
    private static final int TC_STRING = 0x74;
    private static final int TC_ARRAY = 0x75;
    private static final int TC_CLASS = 0x76;
    private static final int TC_BLOCKDATA = 0x77;
    private static final int TC_ENDBLOCKDATA = 0x78;
    private static final int TC_BLOCKDATALONG = 0x7A;
    private static final int TC_LONGSTRING = 0x7C;
    private static final int TC_PROXYCLASSDESC = 0x7D;
    private static final int TC_ENUM = 0x7E;
    private static final int BASE_HANDLE = 0x7E0000;
    private static final int SC_WRITE_METHOD = 0x01;
    private static final int SC_SERIALIZABLE = 0x02;
    private static final int SC_EXTERNALIZABLE = 0x04;
    private static final int SC_BLOCK_DATA = 0x08;
    /** The longest chain of superclass descriptors accepted (also stops a descriptor naming itself). */
    private static final int MAX_HIERARCHY = 64;

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

    /** Marks a handle that is not a class descriptor (an object, array, string, enum or class). */
    private static final Object OTHER = new Object();

    private final ByteSource in;
    private final CodecLimits limits;
    private final String what;
    private final List<Object> handles = new ArrayList<>();
    private int depth;
    private long references;

    private SerialStreamCheck(byte[] buf, int off, int len, CodecLimits limits, String what) {
        this.in = new ByteSource(buf, off, len);
        this.limits = limits;
        this.what = what;
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

    /** One object (or, where {@code blockDataAllowed}, one block of data) that starts with type code {@code tc}. */
    private void content(int tc, boolean blockDataAllowed) throws MalformedFrameException {
        switch (tc) {
            case TC_NULL:
                return;
            case TC_REFERENCE:
                handle();
                countReference();
                return;
            case TC_OBJECT:
                object();
                return;
            case TC_ARRAY:
                array();
                return;
            case TC_STRING:
            case TC_LONGSTRING:
                string(tc, "string");
                return;
            case TC_ENUM:
                classDesc();
                newHandle(OTHER);
                stringObject(typeCode(), "enum constant name");
                return;
            case TC_CLASS:
                classDesc();
                newHandle(OTHER);
                return;
            case TC_CLASSDESC:
            case TC_PROXYCLASSDESC:
                classDesc(tc);
                return;
            case TC_BLOCKDATA:
            case TC_BLOCKDATALONG:
                if (!blockDataAllowed) {
                    throw malformed("block data where an object belongs");
                }
                in.skip(tc == TC_BLOCKDATA ? in.readByte(what) : in.readInt(what), what);
                return;
            default:
                throw malformed(String.format("unexpected type code 0x%02x", tc));
        }
    }

    private void object() throws MalformedFrameException {
        ClassDesc desc = classDesc();
        if (desc == null) {
            throw malformed("object without a class");
        }
        newHandle(OTHER);
        enter();
        ClassDesc[] chain = hierarchy(desc);
        for (int i = chain.length - 1; i >= 0; i--) {
            ClassDesc d = chain[i];
            if ((d.flags & SC_EXTERNALIZABLE) != 0) {
                if ((d.flags & SC_BLOCK_DATA) == 0) {
                    throw malformed("externalizable " + d.name + " in stream protocol version 1");
                }
                annotation();
            } else if ((d.flags & SC_SERIALIZABLE) != 0) {
                in.skip(d.primitiveBytes, what);
                for (int f = 0; f < d.objectFields; f++) {
                    content(typeCode(), false);
                }
                if ((d.flags & SC_WRITE_METHOD) != 0) {
                    annotation();
                }
            } else if (d.primitiveBytes != 0 || d.objectFields != 0) {
                throw malformed("fields of " + d.name + ", which is not serializable");
            }
        }
        depth--;
    }

    private void array() throws MalformedFrameException {
        ClassDesc desc = classDesc();
        if (desc == null || desc.name.length() < 2 || desc.name.charAt(0) != '[') {
            throw malformed("array of a class that is not an array type");
        }
        newHandle(OTHER);
        int length = in.readInt(what);
        if (length < 0) {
            throw malformed("array of negative length " + length);
        }
        if (length > limits.maxArrayLength()) {
            throw new RejectedClassException(null, "array of " + length + " elements exceeds maxArrayLength="
                    + limits.maxArrayLength() + " in " + what);
        }
        int elementBytes = primitiveSize(desc.name.charAt(1));
        if (elementBytes > 0) {
            if ((long) length * elementBytes > in.remaining()) {
                throw malformed("array of " + length + " elements past the end of the stream");
            }
            in.skip(length * elementBytes, what);
            return;
        }
        if (length > in.remaining()) { // every element takes at least one byte
            throw malformed("array of " + length + " elements past the end of the stream");
        }
        enter();
        for (int i = 0; i < length; i++) {
            content(typeCode(), false);
        }
        depth--;
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

    /** A class's or object's annotation: contents (objects and block data) up to the end-of-block marker. */
    private void annotation() throws MalformedFrameException {
        for (int tc = typeCode(); tc != TC_ENDBLOCKDATA; tc = typeCode()) {
            content(tc, true);
        }
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
        if (++depth > limits.maxDepth()) {
            throw new RejectedClassException(null, "object graph deeper than maxObjectDepth=" + limits.maxDepth()
                    + " in " + what);
        }
    }

    private void newHandle(Object h) throws RejectedClassException {
        handles.add(h);
        countReference();
    }

    private void countReference() throws RejectedClassException {
        if (++references > limits.maxReferences()) {
            throw new RejectedClassException(null, "more than maxObjectReferences=" + limits.maxReferences()
                    + " references in " + what);
        }
    }

    private Object handle() throws MalformedFrameException {
        int h = in.readInt(what) - BASE_HANDLE;
        if (h < 0 || h >= handles.size()) {
            throw malformed("reference to unknown handle");
        }
        return handles.get(h);
    }

    private static int primitiveSize(int typeCode) {
        switch (typeCode) {
            case 'B': case 'Z': return 1;
            case 'C': case 'S': return 2;
            case 'I': case 'F': return 4;
            case 'J': case 'D': return 8;
            default: return 0;
        }
    }

    private int typeCode() throws MalformedFrameException {
        return in.readByte(what);
    }

    private MalformedFrameException malformed(String why) {
        return new MalformedFrameException("cannot deserialize " + what + ": " + why);
    }
}
