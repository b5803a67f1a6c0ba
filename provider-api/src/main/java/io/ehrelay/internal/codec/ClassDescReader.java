package io.ehrelay.internal.codec;

import static io.ehrelay.internal.codec.SerialBudget.HASHED;
import static io.ehrelay.internal.codec.SerialBudget.MAX_HIERARCHY;
import static io.ehrelay.internal.codec.SerialBudget.OTHER;
import static io.ehrelay.internal.codec.SerialBudget.SC_EXTERNALIZABLE;
import static io.ehrelay.internal.codec.SerialBudget.SC_SERIALIZABLE;
import static io.ehrelay.internal.codec.SerialBudget.TC_CLASSDESC;
import static io.ehrelay.internal.codec.SerialBudget.TC_ENDBLOCKDATA;
import static io.ehrelay.internal.codec.SerialBudget.TC_LONGSTRING;
import static io.ehrelay.internal.codec.SerialBudget.TC_NULL;
import static io.ehrelay.internal.codec.SerialBudget.TC_PROXYCLASSDESC;
import static io.ehrelay.internal.codec.SerialBudget.TC_REFERENCE;
import static io.ehrelay.internal.codec.SerialBudget.TC_STRING;
import static io.ehrelay.internal.codec.SerialBudget.primitiveSize;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.spi.MalformedFrameException;

/**
 * Reads the class descriptors of a Java serialization stream for {@link SerialStreamWalker}: each whole (a
 * descriptor is small: at most {@value #MAX_CLASS_DESC_BYTES} bytes with its superclasses), registering its handle
 * and counting references in the walk's budget. Not thread-safe: one per walker.
 */
final class ClassDescReader {

    /** The most bytes one class descriptor (names, fields, annotation) may take. */
    static final int MAX_CLASS_DESC_BYTES = 64 * 1024;

    /** One class of a serialized object, as its descriptor says: what the walker needs to pass its fields. */
    static final class ClassDesc {
        final String name;
        int flags;
        int primitiveBytes;
        int objectFields;
        ClassDesc superDesc;
        boolean hashed;

        ClassDesc(String name) {
            this.name = name;
        }
    }

    private final SerialStreamWalker.Input in;
    private final SerialBudget budget;
    private int descBytes;

    ClassDescReader(SerialStreamWalker.Input in, SerialBudget budget) {
        this.in = in;
        this.budget = budget;
    }

    /** The class descriptor the stream holds next (a new one, a reference or null). */
    ClassDesc read() throws IOException, MalformedFrameException {
        return read(typeCode());
    }

    /** A class descriptor starting with {@code tc}: read whole (it is small), its superclasses included. */
    ClassDesc read(int tc) throws IOException, MalformedFrameException {
        descBytes = 0;
        return classDesc(tc, 0);
    }

    private ClassDesc classDesc(int tc, int level) throws IOException, MalformedFrameException {
        if (level > MAX_HIERARCHY) {
            throw budget.malformed("class hierarchy deeper than " + MAX_HIERARCHY);
        }
        switch (tc) {
            case TC_NULL:
                return null;
            case TC_REFERENCE: {
                Object h = budget.handle(in.read(4));
                if (!(h instanceof ClassDesc)) {
                    throw budget.malformed("reference to something other than a class descriptor");
                }
                budget.countReference();
                return (ClassDesc) h;
            }
            case TC_CLASSDESC: {
                String name = utf();
                descRead(8); // serialVersionUID
                ClassDesc d = new ClassDesc(name);
                budget.newHandle(d);
                d.flags = (int) descRead(1);
                if ((d.flags & SC_SERIALIZABLE) != 0 && (d.flags & SC_EXTERNALIZABLE) != 0) {
                    throw budget.malformed("class " + name + " both serializable and externalizable");
                }
                int fields = (int) descRead(2);
                boolean objects = false;
                for (int i = 0; i < fields; i++) {
                    int type = (int) descRead(1);
                    utf();
                    int size = primitiveSize(type);
                    if (size > 0) {
                        if (objects) {
                            throw budget.malformed("primitive field after an object field in " + name);
                        }
                        d.primitiveBytes += size;
                    } else if (type == 'L' || type == '[') {
                        objects = true;
                        d.objectFields++;
                        stringObject(typeCode(), "field type");
                    } else {
                        throw budget.malformed(String.format("field type code 0x%02x in %s", type, name));
                    }
                }
                classAnnotation();
                d.superDesc = classDesc(typeCode(), level + 1);
                d.hashed = HASHED.contains(name) || d.superDesc != null && d.superDesc.hashed;
                return d;
            }
            case TC_PROXYCLASSDESC: {
                ClassDesc d = new ClassDesc("java.lang.reflect.Proxy");
                budget.newHandle(d);
                int interfaces = (int) descRead(4);
                if (interfaces < 0 || interfaces > 65535) {
                    throw budget.malformed("proxy class with " + interfaces + " interfaces");
                }
                for (int i = 0; i < interfaces; i++) {
                    utf();
                }
                d.flags = SC_SERIALIZABLE;
                classAnnotation();
                d.superDesc = classDesc(typeCode(), level + 1);
                return d;
            }
            default:
                throw budget.malformed(String.format("unexpected type code 0x%02x where a class descriptor belongs",
                        tc));
        }
    }

    /** A class's annotation: nothing, or what RMI writes there (its codebase: a string or null), then the end. */
    private void classAnnotation() throws IOException, MalformedFrameException {
        int tc = typeCode();
        if (tc != TC_ENDBLOCKDATA) {
            if (tc == TC_NULL) {
                // no codebase
            } else if (tc == TC_STRING || tc == TC_LONGSTRING || tc == TC_REFERENCE) {
                stringObject(tc, "class annotation");
            } else {
                throw budget.malformed(String.format("type code 0x%02x in a class annotation (RMI writes a codebase "
                        + "string there, or nothing)", tc));
            }
            if (typeCode() != TC_ENDBLOCKDATA) {
                throw budget.malformed("a class annotation holding more than a codebase");
            }
        }
    }

    /** A string object (new or a reference) inside a class descriptor or an enum: read whole. */
    void stringObject(int tc, String role) throws IOException, MalformedFrameException {
        if (tc == TC_STRING || tc == TC_LONGSTRING) {
            long n = tc == TC_STRING ? descRead(2) : descRead(8);
            if (n < 0 || n > MAX_CLASS_DESC_BYTES) {
                throw budget.malformed(role + " of " + n + " bytes");
            }
            skipDesc(n);
            budget.newHandle(OTHER);
        } else if (tc == TC_REFERENCE) {
            budget.handle(in.read(4));
            budget.countReference();
        } else {
            throw budget.malformed(String.format("unexpected type code 0x%02x for the %s", tc, role));
        }
    }

    /** A modified-UTF-8 name inside a class descriptor. */
    private String utf() throws IOException, MalformedFrameException {
        int n = (int) descRead(2);
        descCount(n);
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) in.read(1);
        }
        return new String(b, StandardCharsets.UTF_8);
    }

    private long descRead(int n) throws IOException, MalformedFrameException {
        descCount(n);
        return in.read(n);
    }

    private void skipDesc(long n) throws IOException, MalformedFrameException {
        descCount(n);
        while (n > 0) {
            n -= in.skipSome(n);
        }
    }

    private void descCount(long n) throws MalformedFrameException {
        descBytes += (int) Math.min(n, MAX_CLASS_DESC_BYTES + 1L);
        if (descBytes > MAX_CLASS_DESC_BYTES) {
            throw budget.malformed("a class descriptor of more than " + MAX_CLASS_DESC_BYTES + " bytes");
        }
    }

    /** {@code desc}'s classes, the topmost superclass first. */
    ClassDesc[] hierarchy(ClassDesc desc) throws MalformedFrameException {
        List<ClassDesc> chain = new ArrayList<>();
        for (ClassDesc d = desc; d != null; d = d.superDesc) {
            if (chain.size() == MAX_HIERARCHY) {
                throw budget.malformed("class hierarchy of " + desc.name + " deeper than " + MAX_HIERARCHY);
            }
            chain.add(0, d);
        }
        return chain.toArray(new ClassDesc[0]);
    }

    private int typeCode() throws IOException {
        return (int) in.read(1);
    }
}
