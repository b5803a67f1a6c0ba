package io.ehrelay.internal.codec;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which classes a serialized cache value may contain; everything else is rejected before it is instantiated.
 * Patterns: a class ({@code com.acme.Order}), a package ({@code com.acme.*}), a package and its sub-packages
 * ({@code com.acme.**}); arrays are judged by their component type. The defaults (the JDK's value types and
 * collections) and why each is there: docs/configuration.md, "The classes allowed by default". Immutable and
 * thread-safe.
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
            "java.util.EnumSet$SerializationProxy", "java.util.Stack", "java.util.BitSet", "java.util.Currency",
            "java.util.concurrent.ConcurrentSkipListMap", "java.util.concurrent.ConcurrentSkipListSet",
            "java.util.concurrent.CopyOnWriteArraySet", "java.util.concurrent.atomic.AtomicInteger",
            "java.util.concurrent.atomic.AtomicLong", "java.util.concurrent.atomic.AtomicBoolean",
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

    /**
     * Named sets of the data classes a framework puts into a cache, written {@code @name} in
     * {@code allowedClasses}. Each lists exactly those classes (and the packages of value-type descriptors a
     * cache key embeds), never a framework's whole namespace: see docs/configuration.md, <i>Presets</i>, for how they were
     * chosen and the versions they were checked against.
     */
    public static final Map<String, List<String>> PRESETS;
    /** {@link #PRESETS}, each as an allow-list of its own. */
    private static final Map<String, AllowList> COMPILED_PRESETS;

    static {
        Map<String, List<String>> p = new LinkedHashMap<>();
        // Hibernate ORM 5.6 with hibernate-ehcache: keys, entries, the read-write strategy's wrappers and the
        // query cache's key and item. Entity and query keys embed the identifier's or parameters'
        // org.hibernate.type.Type (a basic type, its java/sql descriptors and column Size); org.hibernate.tuple
        // and org.hibernate.property stay out, which breaks the known deserialization gadget chains through
        // TypedValue and ComponentType (they need a tuplizer and a getter from those packages).
        p.put("@hibernate5", Collections.unmodifiableList(Arrays.asList(
                "org.hibernate.cache.internal.CacheKeyImplementation",
                "org.hibernate.cache.internal.NaturalIdCacheKey",
                "org.hibernate.cache.internal.QueryResultsCacheImpl$CacheItem",
                "org.hibernate.cache.spi.QueryKey",
                "org.hibernate.cache.spi.FilterKey",
                "org.hibernate.cache.spi.entry.StandardCacheEntryImpl",
                "org.hibernate.cache.spi.entry.ReferenceCacheEntryImpl",
                "org.hibernate.cache.spi.entry.CollectionCacheEntry",
                "org.hibernate.cache.spi.support.AbstractReadWriteAccess$Item",
                "org.hibernate.cache.spi.support.AbstractReadWriteAccess$SoftLockImpl",
                "org.hibernate.internal.util.compare.ComparableComparator",
                "org.hibernate.engine.spi.TypedValue",
                "org.hibernate.transform.CacheableResultTransformer",
                "org.hibernate.engine.jdbc.Size",
                "org.hibernate.engine.jdbc.Size$LobMultiplier",
                "org.hibernate.type.*",
                "org.hibernate.type.descriptor.java.*",
                "org.hibernate.type.descriptor.sql.*")));
        // Spring's cache abstraction (spring-context 4.0-6.x): the key of a method with several or no arguments,
        // and the stand-in for a cached null
        p.put("@spring", Collections.unmodifiableList(Arrays.asList(
                "org.springframework.cache.interceptor.SimpleKey",
                "org.springframework.cache.support.NullValue")));
        PRESETS = Collections.unmodifiableMap(p);
        Map<String, AllowList> compiled = new LinkedHashMap<>();
        for (Map.Entry<String, List<String>> e : PRESETS.entrySet()) {
            compiled.put(e.getKey(), AllowList.of(e.getValue()));
        }
        COMPILED_PRESETS = Collections.unmodifiableMap(compiled);
    }

    private final List<String> exact = new ArrayList<>();
    private final List<String> packages = new ArrayList<>();
    private final List<String> trees = new ArrayList<>();
    private final List<String> patterns;
    /** What the user configured, presets unexpanded, for advice that repeats it. */
    private final List<String> configured;

    private AllowList(List<String> configured, List<String> patterns) {
        this.configured = Collections.unmodifiableList(new ArrayList<>(configured));
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

    /** The first preset that admits {@code className}, or {@code null}. */
    public static String presetAdmitting(String className) {
        for (Map.Entry<String, AllowList> preset : COMPILED_PRESETS.entrySet()) {
            if (preset.getValue().allows(className)) {
                return preset.getKey();
            }
        }
        return null;
    }

    /**
     * The JDK defaults plus the user's own patterns and presets ({@code @hibernate5}).
     *
     * @throws IllegalArgumentException naming an unknown preset and the known ones, or a pattern too broad to
     *         be an allow-list (see {@link #checkBreadth})
     */
    public static AllowList withDefaults(List<String> extra) {
        List<String> all = new ArrayList<>(DEFAULTS);
        for (String p : extra) {
            checkBreadth(p);
            if (p.startsWith("@")) {
                List<String> preset = PRESETS.get(p);
                if (preset == null) {
                    throw new IllegalArgumentException("unknown preset " + p + "; the presets are "
                            + String.join(", ", PRESETS.keySet()));
                }
                all.addAll(preset);
            } else {
                all.add(p);
            }
        }
        return new AllowList(extra, all);
    }

    /**
     * Refuses a wildcard that admits a whole top-level name space ({@code java.**}, {@code com.*}, {@code **}):
     * that would let in classes whose deserialization runs code (the JDK has some; so do many libraries under
     * {@code org} or {@code com}). A wildcard needs at least two package names before it ({@code com.acme.**}).
     */
    static void checkBreadth(String pattern) {
        if (!pattern.endsWith("*")) {
            return;
        }
        String stem = pattern.endsWith(".**") ? pattern.substring(0, pattern.length() - 3)
                : pattern.endsWith(".*") ? pattern.substring(0, pattern.length() - 2) : pattern;
        if (stem.contains("*") || stem.isEmpty() || stem.indexOf('.') < 0) {
            throw new IllegalArgumentException("'" + pattern + "' admits too much: a wildcard admits a package "
                    + "(com.acme.*) or a package tree (com.acme.**) of at least two names; list the packages or "
                    + "classes you replicate (learnAllowedClasses=true prints them), or use a preset");
        }
    }

    /** Exactly the given patterns, without defaults. */
    public static AllowList of(List<String> patterns) {
        return new AllowList(patterns, patterns);
    }

    /**
     * The smallest {@code allowedClasses} entry that admits {@code className}: a preset that admits it and is
     * not configured yet, else the class's exact name.
     */
    public String additionFor(String className) {
        String preset = presetAdmitting(className);
        return preset != null && !configured.contains(preset) ? preset : className;
    }

    /** The whole {@code allowedClasses} setting with {@code additions} appended to what is configured. */
    public String settingWith(Collection<String> additions) {
        List<String> all = new ArrayList<>(configured);
        for (String a : additions) {
            if (!all.contains(a)) {
                all.add(a);
            }
        }
        return "allowedClasses=" + String.join("|", all);
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
