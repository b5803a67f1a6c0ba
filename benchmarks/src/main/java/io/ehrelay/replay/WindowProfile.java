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
            profiler = c.getMethod("getInstance", String.class).invoke(null, parts[0]);
            execute = c.getMethod("execute", String.class);
            stopOptions = parts[2];
            execute.invoke(profiler, "start," + parts[1]);
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
