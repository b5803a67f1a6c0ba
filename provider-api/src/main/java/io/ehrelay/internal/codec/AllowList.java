package io.ehrelay.internal.codec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * Which classes a serialized cache value may contain. Everything else is rejected before it is instantiated.
 *
 * <p>Patterns: an exact class name ({@code com.acme.Order}), a package ({@code com.acme.*}) or a package and
 * its sub-packages ({@code com.acme.**}). Arrays are judged by their component type; primitive arrays are
 * allowed. {@code java.lang.Object}, {@code java.io.Serializable} and {@code java.util.Map$Entry} are listed for
 * arrays of them ({@code Object[]}, {@code Serializable[]}, {@code Map.Entry[]}, which the JDK's own collections
 * use while they deserialize); none of them can itself be instantiated from a stream. The locks among the
 * defaults are the superclasses of {@code ConcurrentHashMap}'s serialized segments. The defaults cover the JDK's value types: boxed primitives, {@code String}, {@code BigInteger},
 * {@code BigDecimal}, the common {@code java.util} collections, {@code Date}, {@code UUID} and
 * {@code java.time}. Immutable and thread-safe.
 */
public final class AllowList {

    /** The JDK value types allowed out of the box. */
    public static final List<String> DEFAULTS = Collections.unmodifiableList(Arrays.asList(
            "java.lang.String", "java.lang.Boolean", "java.lang.Byte", "java.lang.Short", "java.lang.Character",
            "java.lang.Integer", "java.lang.Long", "java.lang.Float", "java.lang.Double", "java.lang.Number",
            "java.lang.Enum", "java.lang.Object", "java.io.Serializable", "java.math.BigInteger",
            "java.math.BigDecimal",
            "java.util.ArrayList", "java.util.LinkedList", "java.util.ArrayDeque", "java.util.Vector",
            "java.util.Map$Entry", "java.util.HashMap", "java.util.LinkedHashMap", "java.util.TreeMap", "java.util.Hashtable",
            "java.util.HashSet", "java.util.LinkedHashSet", "java.util.TreeSet", "java.util.EnumMap",
            "java.util.Arrays$ArrayList", "java.util.Collections$*", "java.util.ImmutableCollections$*",
            "java.util.CollSer", "java.util.concurrent.ConcurrentHashMap",
            "java.util.concurrent.ConcurrentHashMap$Segment", "java.util.concurrent.CopyOnWriteArrayList",
            // ConcurrentHashMap writes its segments (locks) for compatibility with Java 7: their superclasses
            "java.util.concurrent.locks.ReentrantLock", "java.util.concurrent.locks.ReentrantLock$Sync",
            "java.util.concurrent.locks.ReentrantLock$NonfairSync",
            "java.util.concurrent.locks.AbstractQueuedSynchronizer",
            "java.util.concurrent.locks.AbstractOwnableSynchronizer",
            "java.util.Date", "java.util.UUID", "java.util.Locale", "java.time.*", "java.time.chrono.*",
            "java.time.zone.*", "java.net.URI", "java.sql.Date", "java.sql.Timestamp", "java.sql.Time"));

    private final List<String> exact = new ArrayList<>();
    private final List<String> packages = new ArrayList<>();
    private final List<String> trees = new ArrayList<>();
    private final List<String> patterns;

    private AllowList(List<String> patterns) {
        this.patterns = Collections.unmodifiableList(new ArrayList<>(patterns));
        for (String p : patterns) {
            if (p.endsWith(".**")) {
                trees.add(p.substring(0, p.length() - 2));
            } else if (p.endsWith("*")) {
                packages.add(p.substring(0, p.length() - 1));
            } else {
                exact.add(p);
            }
        }
    }

    /** The JDK defaults plus the user's own patterns. */
    public static AllowList withDefaults(List<String> extra) {
        List<String> all = new ArrayList<>(DEFAULTS);
        all.addAll(extra);
        return new AllowList(all);
    }

    /** Exactly the given patterns, without defaults. */
    public static AllowList of(List<String> patterns) {
        return new AllowList(patterns);
    }

    public boolean allows(Class<?> type) {
        Class<?> c = type;
        while (c.isArray()) {
            c = c.getComponentType();
        }
        return c.isPrimitive() || allows(c.getName());
    }

    public boolean allows(String className) {
        if (exact.contains(className)) {
            return true;
        }
        for (String prefix : packages) {
            // "java.util.Collections$*" matches nested classes; "com.acme.*" matches classes of that package only
            if (className.startsWith(prefix) && className.indexOf('.', prefix.length()) < 0) {
                return true;
            }
        }
        for (String prefix : trees) {
            if (className.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    public List<String> patterns() {
        return patterns;
    }
}
