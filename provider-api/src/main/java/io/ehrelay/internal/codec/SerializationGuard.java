package io.ehrelay.internal.codec;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The one place that decides whether a Java-serialized object graph may be read: the allow-list, the limits of
 * {@link CodecLimits} and a byte budget. The codec checks values itself ({@link SerialStreamCheck}, then each class
 * in {@code resolveClass}); what the JDK reads for a transport (RMI's calls) gets the same rules as a JVM
 * serialization filter, {@link #remoteCallFilter} (built by reflection: ehrelay is compiled for Java 8). See
 * docs/rmi.md. Thread-safe.
 */
public final class SerializationGuard {

    private static final String JAVA9_FILTER = "java.io.ObjectInputFilter";
    private static final String JAVA8_FILTER = "sun.misc.ObjectInputFilter";

    private static final Class<?> JDK_FILTER = firstLoadable(JAVA9_FILTER, JAVA8_FILTER);
    private static final Method SET_FILTER = setFilterMethod();

    private SerializationGuard() {
    }

    /**
     * Why a class or graph described by these values must be rejected, or {@code null} when it passes.
     *
     * @param type         the class being read, or null for a check of the limits alone
     * @param extraClasses exact class names allowed besides the allow-list (a protocol's own envelope types)
     * @param maxBytes     the most stream bytes the graph may take
     */
    static String violation(Class<?> type, long depth, long arrayLength, long references, long streamBytes,
                            CodecLimits limits, Set<String> extraClasses, long maxBytes) {
        String rejected = rejectedClass(type, limits, extraClasses);
        if (rejected != null) {
            return notAllowedMessage(rejected);
        }
        if (depth > limits.maxDepth()) {
            return "object graph deeper than maxObjectDepth=" + limits.maxDepth();
        }
        if (arrayLength > limits.maxArrayLength()) {
            return "array of " + arrayLength + " elements exceeds maxArrayLength=" + limits.maxArrayLength();
        }
        if (references > limits.maxReferences()) {
            return "more than maxObjectReferences=" + limits.maxReferences() + " references";
        }
        if (streamBytes > maxBytes) {
            return "serialized graph of more than " + maxBytes + " bytes";
        }
        return null;
    }

    /** The name of {@code type}'s (element) class when it is not allowed, else {@code null}. */
    static String rejectedClass(Class<?> type, CodecLimits limits, Set<String> extraClasses) {
        if (type == null) {
            return null;
        }
        Class<?> c = type;
        while (c.isArray()) {
            c = c.getComponentType();
        }
        return c.isPrimitive() || extraClasses.contains(c.getName()) || limits.allowList().allows(c) ? null
                : c.getName();
    }

    /** Why {@code className} is refused, with the setting that would admit it. */
    static String notAllowedMessage(String className) {
        return "class " + className + " is not in the allow-list; add " + className
                + " to the provider property 'allowedClasses'";
    }

    /**
     * The element class named by a class descriptor's name ({@code "[[Lcom.x.Y;"} gives {@code "com.x.Y"}, a
     * plain name itself), or {@code null} for an array of primitives: what the allow-list judges.
     */
    static String componentClassName(String descriptorName) {
        int i = 0;
        while (i < descriptorName.length() && descriptorName.charAt(i) == '[') {
            i++;
        }
        if (i == 0) {
            return descriptorName;
        }
        if (i < descriptorName.length() && descriptorName.charAt(i) == 'L' && descriptorName.endsWith(";")) {
            return descriptorName.substring(i + 1, descriptorName.length() - 1);
        }
        return null;
    }

    /**
     * The serialization filter interface of the running JVM: {@code java.io.ObjectInputFilter} (Java 9+) or
     * {@code sun.misc.ObjectInputFilter} (Java 8u121+).
     *
     * @throws UnsupportedOperationException on a Java 8 older than update 121, which has neither
     */
    public static Class<?> jdkFilterInterface() {
        Class<?> c = JDK_FILTER;
        if (c == null) {
            throw new UnsupportedOperationException("this JVM (" + System.getProperty("java.version")
                    + ") has no serialization filter (JEP 290): ehrelay's RMI listener needs Java 8 update 121 or "
                    + "later to refuse classes outside the allow-list before they are deserialized");
        }
        return c;
    }

    /** The first of {@code names} the bootstrap class loader has, or {@code null}. */
    private static Class<?> firstLoadable(String... names) {
        for (String name : names) {
            try {
                return Class.forName(name, false, null);
            } catch (ClassNotFoundException | LinkageError e) {
                // not in this JVM: try the next
            }
        }
        return null;
    }

    /**
     * A thread-safe filter for the arguments of remote calls (e.g. an RMI object's export filter): the
     * allow-list plus {@code envelopeClasses}, the limits, and at most {@code limits.maxFrameBytes()} stream
     * bytes per call. Each rejection is reported to {@code onRejected} (to count and log it) before the class's
     * {@code readObject} could run. The result implements {@link #jdkFilterInterface()}.
     */
    public static Object remoteCallFilter(CodecLimits limits, Collection<String> envelopeClasses,
                                          Consumer<String> onRejected) {
        return jdkFilter(jdkFilterInterface(), limits, envelopeClasses, limits.maxFrameBytes(),
                (className, why) -> onRejected.accept(why), null);
    }

    /** As above, telling {@code onRejected} the refused class (null when a limit was the reason) and why. */
    public static Object remoteCallFilter(CodecLimits limits, Collection<String> envelopeClasses,
                                          Rejections onRejected) {
        return jdkFilter(jdkFilterInterface(), limits, envelopeClasses, limits.maxFrameBytes(), onRejected, null);
    }

    /**
     * As above, also telling {@code onAdmitted} each class the filter lets through, on the thread reading the call
     * and before that class's {@code readObject} runs: so an envelope class can learn which listener it is read
     * for (e.g. whose memory bound it takes its share of).
     */
    public static Object remoteCallFilter(CodecLimits limits, Collection<String> envelopeClasses,
                                          Rejections onRejected, Consumer<Class<?>> onAdmitted) {
        return jdkFilter(jdkFilterInterface(), limits, envelopeClasses, limits.maxFrameBytes(), onRejected,
                onAdmitted);
    }

    /**
     * As {@link #remoteCallFilter(CodecLimits, Collection, Rejections)}, refusing first, and reporting to no one,
     * every call whose caller {@code callerRefusal} refuses (it answers why, having counted it, or {@code null}):
     * a caller that may not call costs one check, nothing of what it sent is read, and its refused classes or
     * limits are not reported as the call's (they are not a peer's event that failed to decode).
     */
    public static Object remoteCallFilter(CodecLimits limits, Collection<String> envelopeClasses,
                                          Rejections onRejected, Supplier<String> callerRefusal) {
        return jdkFilter(jdkFilterInterface(), limits, envelopeClasses, limits.maxFrameBytes(), onRejected, null,
                callerRefusal);
    }

    /** Receives a rejection: the refused class (null when a limit was the reason) and why. */
    public interface Rejections {
        void rejected(String className, String why);
    }

    /**
     * A JDK serialization filter (an instance of {@code filterInterface}: anything shaped like the JDK's, i.e. a
     * {@code checkInput(FilterInfo)} method returning a nested {@code Status} enum with {@code ALLOWED},
     * {@code REJECTED} and {@code UNDECIDED}; {@code FilterInfo} with {@code serialClass()}, {@code depth()},
     * {@code arrayLength()}, {@code references()} and {@code streamBytes()}) applying {@link #violation}.
     */
    static Object jdkFilter(Class<?> filterInterface, CodecLimits limits, Collection<String> extraClasses,
                            long maxBytes, Rejections onRejected, Consumer<Class<?>> onAdmitted) {
        return jdkFilter(filterInterface, limits, extraClasses, maxBytes, onRejected, onAdmitted, null);
    }

    static Object jdkFilter(Class<?> filterInterface, CodecLimits limits, Collection<String> extraClasses,
                            long maxBytes, Rejections onRejected, Consumer<Class<?>> onAdmitted,
                            Supplier<String> callerRefusal) {
        Set<String> extra = extraClasses.isEmpty() ? Collections.<String>emptySet()
                : Collections.unmodifiableSet(new HashSet<>(extraClasses));
        FilterShape shape = FilterShape.of(filterInterface);
        InvocationHandler handler = (proxy, method, args) -> {
            switch (method.getName()) {
                case "checkInput": {
                    if (callerRefusal != null && callerRefusal.get() != null) {
                        return shape.rejected;
                    }
                    Object info = args[0];
                    Class<?> type = (Class<?>) shape.serialClass.invoke(info);
                    String why = violation(type, (Long) shape.depth.invoke(info), (Long) shape.arrayLength.invoke(info),
                            (Long) shape.references.invoke(info), (Long) shape.streamBytes.invoke(info), limits,
                            extra, maxBytes);
                    if (why != null) {
                        onRejected.rejected(rejectedClass(type, limits, extra), why);
                        return shape.rejected;
                    }
                    if (type == null) {
                        return shape.undecided;
                    }
                    if (onAdmitted != null) {
                        onAdmitted.accept(type);
                    }
                    return shape.allowed;
                }
                case "toString":
                    return "ehrelay serialization filter";
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                default:
                    throw new UnsupportedOperationException(method.toString());
            }
        };
        return Proxy.newProxyInstance(filterInterface.getClassLoader(), new Class<?>[] {filterInterface}, handler);
    }

    /** This JVM's filter interface, or {@code null} when it has none (Java 8 before update 121). */
    static Class<?> jdkFilterInterfaceOrNull() {
        return JDK_FILTER;
    }

    private static Method setFilterMethod() {
        if (JDK_FILTER == null) {
            return null;
        }
        try {
            if (JDK_FILTER.getName().equals(JAVA9_FILTER)) {
                return ObjectInputStream.class.getMethod("setObjectInputFilter", JDK_FILTER);
            }
            return Class.forName(JAVA8_FILTER + "$Config", false, null)
                    .getMethod("setObjectInputFilter", ObjectInputStream.class, JDK_FILTER);
        } catch (ReflectiveOperationException | LinkageError e) {
            return null;
        }
    }

    /**
     * Sets {@code filter} (from {@link #jdkFilter}) on {@code in}, through the JVM's own API: the JDK then also
     * asks it before the collections' {@code readObject} methods allocate for the sizes they read. Does nothing
     * on a JVM without one.
     */
    static void setJdkFilter(ObjectInputStream in, Object filter) throws IOException {
        if (SET_FILTER == null) {
            return;
        }
        try {
            if (Modifier.isStatic(SET_FILTER.getModifiers())) {
                SET_FILTER.invoke(null, in, filter);
            } else {
                SET_FILTER.invoke(in, filter);
            }
        } catch (IllegalAccessException e) {
            throw new IOException("cannot set the serialization filter: " + e, e);
        } catch (InvocationTargetException e) {
            throw new IOException("cannot set the serialization filter: " + e.getCause(), e.getCause());
        }
    }

    /** The reflective handles of one filter interface's shape. */
    private static final class FilterShape {
        private static final ConcurrentMap<Class<?>, FilterShape> SHAPES =
                new ConcurrentHashMap<>();

        final Method serialClass;
        final Method depth;
        final Method arrayLength;
        final Method references;
        final Method streamBytes;
        final Object allowed;
        final Object rejected;
        final Object undecided;

        FilterShape(Class<?> filterInterface) {
            try {
                ClassLoader loader = filterInterface.getClassLoader();
                Class<?> info = Class.forName(filterInterface.getName() + "$FilterInfo", false, loader);
                Class<?> status = Class.forName(filterInterface.getName() + "$Status", false, loader);
                serialClass = info.getMethod("serialClass");
                depth = info.getMethod("depth");
                arrayLength = info.getMethod("arrayLength");
                references = info.getMethod("references");
                streamBytes = info.getMethod("streamBytes");
                allowed = status.getField("ALLOWED").get(null);
                rejected = status.getField("REJECTED").get(null);
                undecided = status.getField("UNDECIDED").get(null);
                filterInterface.getMethod("checkInput", info);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(filterInterface.getName()
                        + " is not shaped like the JDK's serialization filter: " + e, e);
            }
        }

        static FilterShape of(Class<?> filterInterface) {
            FilterShape s = SHAPES.get(filterInterface);
            return s != null ? s : SHAPES.computeIfAbsent(filterInterface, FilterShape::new);
        }
    }
}
