package io.ehrelay.internal;

import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import net.sf.ehcache.CacheException;

/**
 * Checks, before anything of ehrelay's runs, that the libraries it calls are on the class path in a version that
 * has what it calls: {@code slf4j-api} (1.6 or later) and {@code metrics-core} ({@code com.codahale.metrics}, 3.0
 * or later). An application that brings an older or a different jar — Maven keeps the application's own version
 * when both declare one — gets one clear {@link CacheException} at CacheManager start, naming the jar that is there
 * and the one to use, instead of a {@code NoSuchMethodError} in the middle of replication.
 *
 * <p>This class refers to those libraries only by name, so it can load when they are missing. Internal.
 */
public final class Dependencies {

    /** A class (and optionally a method or constructor of it) ehrelay needs, and the artifact that provides it. */
    static final class Need {
        final String artifact;
        final String className;
        final String member; // null: the class alone; "<init>": a constructor
        final String[] parameterTypes;

        Need(String artifact, String className, String member, String... parameterTypes) {
            this.artifact = artifact;
            this.className = className;
            this.member = member;
            this.parameterTypes = parameterTypes;
        }

        String describe() {
            if (member == null) {
                return className;
            }
            String params = String.join(", ", parameterTypes);
            return member.equals("<init>") ? "new " + className + "(" + params + ")"
                    : className + "." + member + "(" + params + ")";
        }
    }

    private static final String SLF4J = "org.slf4j:slf4j-api 1.6 or later";
    private static final String METRICS = "io.dropwizard.metrics:metrics-core 3.0.2 or later (4.2.x recommended; "
            + "3.x was also published as com.codahale.metrics:metrics-core)";

    /** What ehrelay's own classes call, by artifact. */
    static final List<Need> NEEDS = Collections.unmodifiableList(Arrays.asList(
            new Need(SLF4J, "org.slf4j.LoggerFactory", "getLogger", "java.lang.Class"),
            new Need(SLF4J, "org.slf4j.Logger", "warn", "java.lang.String", "[Ljava.lang.Object;"),
            new Need(SLF4J, "org.slf4j.Logger", "info", "java.lang.String", "java.lang.Object", "java.lang.Object"),
            new Need(SLF4J, "org.slf4j.Logger", "isDebugEnabled"),
            new Need(METRICS, "com.codahale.metrics.MetricRegistry", "meter", "java.lang.String"),
            new Need(METRICS, "com.codahale.metrics.MetricRegistry", "counter", "java.lang.String"),
            new Need(METRICS, "com.codahale.metrics.MetricRegistry", "register", "java.lang.String",
                    "com.codahale.metrics.Metric"),
            new Need(METRICS, "com.codahale.metrics.MetricRegistry", "removeMatching",
                    "com.codahale.metrics.MetricFilter"),
            new Need(METRICS, "com.codahale.metrics.MetricRegistry", "addListener",
                    "com.codahale.metrics.MetricRegistryListener"),
            new Need(METRICS, "com.codahale.metrics.MetricRegistry", "removeListener",
                    "com.codahale.metrics.MetricRegistryListener"),
            new Need(METRICS, "com.codahale.metrics.Timer", "<init>", "com.codahale.metrics.Reservoir"),
            new Need(METRICS, "com.codahale.metrics.Timer", "update", "long", "java.util.concurrent.TimeUnit"),
            new Need(METRICS, "com.codahale.metrics.Histogram", "<init>", "com.codahale.metrics.Reservoir"),
            new Need(METRICS, "com.codahale.metrics.SlidingWindowReservoir", "<init>", "int"),
            new Need(METRICS, "com.codahale.metrics.Snapshot", "getMean"),
            new Need(METRICS, "com.codahale.metrics.Snapshot", "get999thPercentile"),
            new Need(METRICS, "com.codahale.metrics.Meter", "mark", "long"),
            new Need(METRICS, "com.codahale.metrics.Counter", "inc", "long"),
            new Need(METRICS, "com.codahale.metrics.MetricFilter", null)));

    private static volatile boolean checked;

    private Dependencies() {
    }

    /** Checks {@link #NEEDS} once per class loader of ehrelay. */
    public static void check() {
        if (!checked) {
            check(NEEDS, Dependencies.class.getClassLoader());
            checked = true;
        }
    }

    /**
     * @throws CacheException naming each artifact that is missing or too old, the jar found and what it lacks
     */
    static void check(List<Need> needs, ClassLoader loader) {
        List<String> problems = new ArrayList<>();
        List<String> reported = new ArrayList<>();
        for (Need need : needs) {
            if (reported.contains(need.artifact)) {
                continue;
            }
            String problem = problem(need, loader);
            if (problem != null) {
                problems.add(problem);
                reported.add(need.artifact);
            }
        }
        if (!problems.isEmpty()) {
            throw new CacheException("ehrelay cannot start: " + String.join("; ", problems));
        }
    }

    private static String problem(Need need, ClassLoader loader) {
        Class<?> c;
        try {
            c = Class.forName(need.className, false, loader);
        } catch (ClassNotFoundException | LinkageError e) {
            return "it needs " + need.artifact + ", but " + need.className + " is not on the class path: add that "
                    + "dependency to the application";
        }
        if (need.member == null) {
            return null;
        }
        try {
            Class<?>[] params = new Class<?>[need.parameterTypes.length];
            for (int i = 0; i < params.length; i++) {
                params[i] = type(need.parameterTypes[i], loader);
            }
            if (need.member.equals("<init>")) {
                c.getConstructor(params);
            } else {
                c.getMethod(need.member, params);
            }
            return null;
        } catch (ClassNotFoundException | NoSuchMethodException | LinkageError e) {
            return "it needs " + need.artifact + ", but the class path has " + need.className + " from "
                    + where(c) + ", which has no " + need.describe() + ": replace that jar (or the dependency that "
                    + "brings it) with " + need.artifact;
        }
    }

    private static Class<?> type(String name, ClassLoader loader) throws ClassNotFoundException {
        switch (name) {
            case "int": return int.class;
            case "long": return long.class;
            case "boolean": return boolean.class;
            case "double": return double.class;
            default: return Class.forName(name, false, loader);
        }
    }

    /** The jar (or directory) a class was loaded from, as far as the JVM tells. */
    static String where(Class<?> c) {
        try {
            CodeSource source = c.getProtectionDomain().getCodeSource();
            return source != null && source.getLocation() != null ? source.getLocation().toString()
                    : "an unknown location";
        } catch (SecurityException e) {
            return "an unknown location";
        }
    }
}
