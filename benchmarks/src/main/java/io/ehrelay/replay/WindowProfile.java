package io.ehrelay.replay;

import java.lang.reflect.Method;

/**
 * Profiles a node over the timed step only (from {@link ReplayNode#markCost()} to the harness's {@code COST}), so
 * that start-up, warm-up and the check after the step do not blur where the step's CPU went. Off unless
 * {@code -Dehrelay.replay.windowProfile=<libasyncProfiler.so>|<start options>|<stop options>} is given (e.g. with
 * {@code EHRELAY_REPLAY_JVM_OPTS}), and async-profiler's Java API ({@code one.profiler.AsyncProfiler}) is on the
 * class path, e.g. {@code -Xbootclasspath/a:async-profiler-3.0.jar}. See docs/benchmarks.md.
 */
final class WindowProfile {

    static final String PROPERTY = "ehrelay.replay.windowProfile";

    private static Object profiler;
    private static Method execute;
    private static String stopOptions;

    private WindowProfile() {
    }

    static synchronized void start() {
        String spec = System.getProperty(PROPERTY);
        if (spec == null || spec.isEmpty() || profiler != null) {
            return;
        }
        String[] parts = spec.split("\\|", 3);
        if (parts.length != 3) {
            throw new IllegalArgumentException(PROPERTY + " must be <library>|<start options>|<stop options>: "
                    + spec);
        }
        try {
            Class<?> c = Class.forName("one.profiler.AsyncProfiler");
            Object instance = c.getMethod("getInstance", String.class).invoke(null, parts[0]);
            Method exec = c.getMethod("execute", String.class);
            exec.invoke(instance, "start," + parts[1]);
            // kept only once it runs: a failed start leaves nothing for stop() to stop
            profiler = instance;
            execute = exec;
            stopOptions = parts[2];
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot start async-profiler for " + PROPERTY + "=" + spec, e);
        }
    }

    static synchronized void stop() {
        if (profiler == null) {
            return;
        }
        try {
            execute.invoke(profiler, "stop," + stopOptions);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot stop async-profiler", e);
        } finally {
            profiler = null;
        }
    }
}
