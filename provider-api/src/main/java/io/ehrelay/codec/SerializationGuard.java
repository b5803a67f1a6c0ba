package io.ehrelay.codec;

import java.io.ObjectInputFilter;
import java.util.Collection;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The one place that decides whether a Java-serialized object graph may be read: the allow-list, the graph
 * depth, array length and reference count of {@link CodecLimits}, and a byte budget. Used by the codec for
 * serialized values and by transports for the {@link ObjectInputFilter} of every remote object they export.
 */
public final class SerializationGuard {

    private SerializationGuard() {
    }

    /**
     * Why {@code info} must be rejected, or {@code null} when it passes.
     *
     * @param extraClasses exact class names allowed besides the allow-list (a protocol's own envelope types)
     * @param maxBytes     the most stream bytes the graph may take
     */
    static String violation(ObjectInputFilter.FilterInfo info, CodecLimits limits, Set<String> extraClasses,
                            long maxBytes) {
        Class<?> type = info.serialClass();
        if (type != null) {
            Class<?> c = type;
            while (c.isArray()) {
                c = c.getComponentType();
            }
            if (!c.isPrimitive() && !extraClasses.contains(c.getName()) && !limits.allowList().allows(c)) {
                return "class " + c.getName() + " is not in the allow-list; add it (or its package as "
                        + packagePatternOf(c.getName()) + ") to the provider property 'allowedClasses'";
            }
        }
        if (info.depth() > limits.maxDepth()) {
            return "object graph deeper than maxObjectDepth=" + limits.maxDepth();
        }
        if (info.arrayLength() > limits.maxArrayLength()) {
            return "array of " + info.arrayLength() + " elements exceeds maxArrayLength=" + limits.maxArrayLength();
        }
        if (info.references() > limits.maxReferences()) {
            return "more than maxObjectReferences=" + limits.maxReferences() + " references";
        }
        if (info.streamBytes() > maxBytes) {
            return "serialized graph of more than " + maxBytes + " bytes";
        }
        return null;
    }

    /** The class name of a rejected class, or {@code null} when the reason was a limit. */
    static String rejectedClass(ObjectInputFilter.FilterInfo info, CodecLimits limits, Set<String> extraClasses) {
        Class<?> c = info.serialClass();
        if (c == null) {
            return null;
        }
        while (c.isArray()) {
            c = c.getComponentType();
        }
        return c.isPrimitive() || extraClasses.contains(c.getName()) || limits.allowList().allows(c) ? null
                : c.getName();
    }

    static String packagePatternOf(String className) {
        int dot = className.lastIndexOf('.');
        return dot < 0 ? className : className.substring(0, dot) + ".*";
    }

    /**
     * A thread-safe filter for the arguments of remote calls (e.g. an RMI object's export filter): the
     * allow-list plus {@code envelopeClasses}, the limits, and at most {@code limits.maxFrameBytes()} stream
     * bytes per call. Each rejection is reported to {@code onRejected} (to count and log it) before the class's
     * {@code readObject} could run.
     */
    public static ObjectInputFilter remoteCallFilter(CodecLimits limits, Collection<String> envelopeClasses,
                                                     Consumer<String> onRejected) {
        Set<String> extra = Set.copyOf(envelopeClasses);
        return info -> {
            String why = violation(info, limits, extra, limits.maxFrameBytes());
            if (why != null) {
                onRejected.accept(why);
                return ObjectInputFilter.Status.REJECTED;
            }
            return info.serialClass() == null ? ObjectInputFilter.Status.UNDECIDED : ObjectInputFilter.Status.ALLOWED;
        };
    }
}
