package io.ehrelay.internal.codec;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InvalidClassException;
import java.io.NotSerializableException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.spi.MalformedFrameException;

/**
 * Encodes keys and values: fast paths for {@code byte[]}, {@code String} and boxed primitives, Java
 * serialization for everything else. Serialized data is checked against {@link CodecLimits} before it is read
 * ({@link SerialStreamCheck}: depth, array lengths, references, class names), and each class is checked against
 * the allow-list again in {@code resolveClass}, before it is loaded or instantiated — the same on every Java
 * version.
 * Stateless and thread-safe.
 */
public final class ValueCodec {

    /** How many bytes precede a {@code byte[]}'s own bytes in its encoding (a tag and a length). */
    public static final int BYTES_PREFIX = 5;

    static final int NULL = 0;
    static final int BYTES = 1;
    static final int STRING = 2;
    static final int INT = 3;
    static final int LONG = 4;
    static final int SHORT = 5;
    static final int BYTE = 6;
    static final int CHAR = 7;
    static final int BOOLEAN = 8;
    static final int FLOAT = 9;
    static final int DOUBLE = 10;
    static final int SERIALIZED = 11;

    /**
     * Whether the JVM's own serialization filter is set on the decoding streams where the JVM has one (always,
     * outside tests): tests switch it off to check that the stream check alone holds the limits, as on a Java 8
     * without JEP 290.
     */
    static volatile boolean useJdkFilter = true;

    private ValueCodec() {
    }

    /** The exact encoded size of a fast-path value, or -1 when it cannot be known without encoding it. */
    static int sizeOf(Object v) {
        if (v == null) {
            return 1;
        } else if (v instanceof byte[]) {
            return 5 + ((byte[]) v).length;
        } else if (v instanceof Integer || v instanceof Float) {
            return 5;
        } else if (v instanceof Long || v instanceof Double) {
            return 9;
        } else if (v instanceof Short || v instanceof Character) {
            return 3;
        } else if (v instanceof Byte || v instanceof Boolean) {
            return 2;
        }
        return -1;
    }

    /**
     * Appends one value.
     *
     * @throws NotSerializableException when the value is neither a fast-path type nor serializable
     */
    public static void write(ByteSink out, Object v) throws IOException {
        write(out, v, null);
    }

    /**
     * Appends one value, telling {@code watch} (when not null) each class that Java serialization writes a
     * descriptor for — every class of the value's graph, superclasses and array types included, once per value.
     */
    public static void write(ByteSink out, Object v, ClassWatch watch) throws IOException {
        if (v == null) {
            out.write(NULL);
        } else if (v instanceof byte[]) {
            byte[] b = (byte[]) v;
            out.write(BYTES);
            out.writeInt(b.length);
            out.write(b, 0, b.length);
        } else if (v instanceof String) {
            byte[] b = ((String) v).getBytes(StandardCharsets.UTF_8);
            out.write(STRING);
            out.writeInt(b.length);
            out.write(b, 0, b.length);
        } else if (v instanceof Integer) {
            out.write(INT);
            out.writeInt((Integer) v);
        } else if (v instanceof Long) {
            out.write(LONG);
            out.writeLong((Long) v);
        } else if (v instanceof Short) {
            out.write(SHORT);
            out.writeShort((Short) v);
        } else if (v instanceof Byte) {
            out.write(BYTE);
            out.write((Byte) v);
        } else if (v instanceof Character) {
            out.write(CHAR);
            out.writeShort((Character) v);
        } else if (v instanceof Boolean) {
            out.write(BOOLEAN);
            out.write((Boolean) v ? 1 : 0);
        } else if (v instanceof Float) {
            out.write(FLOAT);
            out.writeInt(Float.floatToRawIntBits((Float) v));
        } else if (v instanceof Double) {
            out.write(DOUBLE);
            out.writeLong(Double.doubleToRawLongBits((Double) v));
        } else {
            out.write(SERIALIZED);
            int lengthAt = out.position();
            out.writeInt(0);
            try (ObjectOutputStream oos = watch == null ? new ObjectOutputStream(out)
                    : new WatchedObjectOutputStream(out, watch)) {
                oos.writeObject(v);
            }
            out.putInt(lengthAt, out.position() - lengthAt - 4);
        }
    }

    /** Reads one value written by {@link #write}. */
    public static Object read(ByteSource in, CodecLimits limits, String what) throws MalformedFrameException {
        int tag = in.readByte(what);
        switch (tag) {
            case NULL: return null;
            case BYTES: return in.readBytes(in.readLength(what), what);
            case STRING: return in.readUtf8(in.readLength(what), what);
            case INT: return in.readInt(what);
            case LONG: return in.readLong(what);
            case SHORT: return (short) in.readShort(what);
            case BYTE: return (byte) in.readByte(what);
            case CHAR: return (char) in.readShort(what);
            case BOOLEAN: return in.readByte(what) != 0;
            case FLOAT: return Float.intBitsToFloat(in.readInt(what));
            case DOUBLE: return Double.longBitsToDouble(in.readLong(what));
            case SERIALIZED: {
                byte[] serialized = in.readBytes(in.readLength(what), what);
                return deserialize(serialized, 0, serialized.length, limits, what);
            }
            default:
                throw new MalformedFrameException("unknown value tag " + tag + " in " + what);
        }
    }

    private static Object deserialize(byte[] buf, int off, int len, CodecLimits limits, String what)
            throws MalformedFrameException {
        // limits first, on the bytes alone: nothing is allocated for what the stream merely claims
        SerialStreamCheck.check(buf, off, len, limits, what);
        GuardedObjectInputStream in = null;
        try {
            in = new GuardedObjectInputStream(new ByteArrayInputStream(buf, off, len), limits.allowList());
            if (useJdkFilter) {
                in.useJdkFilter(limits, len);
            }
            Object value = in.readObject();
            if (in.read() != -1) {
                throw new MalformedFrameException("trailing bytes after serialized " + what);
            }
            return value;
        } catch (OutOfMemoryError e) {
            // an allocation for a size the stream claimed (no JDK filter to refuse it first): refused, nothing kept
            throw new MalformedFrameException("cannot deserialize " + what + ": it claims more memory than this "
                    + "node has (" + e.getMessage() + ")");
        } catch (StackOverflowError e) {
            throw new MalformedFrameException("cannot deserialize " + what + ": nested too deeply for this thread");
        } catch (ClassNotFoundException e) {
            throw new MalformedFrameException("class of " + what + " not found on this node: " + e.getMessage(), e);
        } catch (IOException | RuntimeException e) {
            if (in != null && in.rejected != null) {
                throw in.rejected;
            }
            throw new MalformedFrameException("cannot deserialize " + what + ": " + e, e);
        } finally {
            if (in != null) {
                try {
                    in.close();
                } catch (IOException e) {
                    // a byte array stream
                }
            }
        }
    }

    /** Tells a {@link ClassWatch} the class of every descriptor it writes. */
    private static final class WatchedObjectOutputStream extends ObjectOutputStream {
        private final ClassWatch watch;

        WatchedObjectOutputStream(ByteSink out, ClassWatch watch) throws IOException {
            super(out);
            this.watch = watch;
        }

        @Override
        protected void annotateClass(Class<?> cl) {
            watch.written(cl);
        }

        @Override
        protected void annotateProxyClass(Class<?> cl) {
            watch.written(cl);
        }
    }

    /**
     * Checks the allow-list on the class name before the class is even loaded, refuses dynamic proxies, and
     * resolves classes through the thread's context class loader first (application servers, containers).
     */
    private static final class GuardedObjectInputStream extends ObjectInputStream {
        private final AllowList allowList;
        RejectedClassException rejected;

        GuardedObjectInputStream(ByteArrayInputStream in, AllowList allowList) throws IOException {
            super(in);
            this.allowList = allowList;
        }

        @Override
        protected Class<?> resolveProxyClass(String[] interfaces) throws IOException {
            reject("java.lang.reflect.Proxy" + Arrays.toString(interfaces));
            throw new InvalidClassException("dynamic proxies are never deserialized");
        }

        /**
         * Where the JVM has a serialization filter (Java 9+, 8u121+), the same rules are set as this stream's
         * filter too: the JDK asks it before a collection's {@code readObject} allocates for the size it read (a
         * size the stream check cannot know the meaning of).
         */
        void useJdkFilter(CodecLimits limits, long maxBytes) throws IOException {
            Class<?> filterType = SerializationGuard.jdkFilterInterfaceOrNull();
            if (filterType != null) {
                SerializationGuard.setJdkFilter(this, SerializationGuard.jdkFilter(filterType, limits,
                        Collections.<String>emptyList(), maxBytes, (className, why) -> {
                            if (rejected == null) {
                                rejected = new RejectedClassException(className, why);
                            }
                        }, null));
            }
        }

        private void reject(String className) {
            if (rejected == null) {
                rejected = new RejectedClassException(className, SerializationGuard.notAllowedMessage(className));
            }
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            String name = SerializationGuard.componentClassName(desc.getName());
            if (name != null && !allowList.allows(name)) {
                reject(name);
                throw new InvalidClassException(name, "not in the allow-list");
            }
            ClassLoader tccl = Thread.currentThread().getContextClassLoader();
            if (tccl != null) {
                try {
                    return Class.forName(desc.getName(), false, tccl);
                } catch (ClassNotFoundException e) {
                    // fall through to the default resolution
                }
            }
            return super.resolveClass(desc);
        }
    }
}
