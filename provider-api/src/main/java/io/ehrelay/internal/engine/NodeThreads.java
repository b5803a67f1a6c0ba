package io.ehrelay.internal.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.spi.Clock;

/**
 * Creates and counts the threads of one node. Every thread ehrelay starts for a CacheManager comes from here:
 * daemon, named {@code ehrelay-<transport>-<cacheManager>-<role>-<n>}, and counted in the {@code threads}
 * gauge. Thread-safe.
 */
public final class NodeThreads {

    /** The prefix of every ehrelay thread name. */
    public static final String PREFIX = "ehrelay-";

    private final String base;
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    private final AtomicInteger counter = new AtomicInteger();
    private final Clock clock;

    public NodeThreads(String transport, String cacheManager, Clock clock) {
        this.base = PREFIX + transport + "-" + cacheManager + "-";
        this.clock = clock;
    }

    public ThreadFactory factory(String role) {
        return r -> {
            Thread t = new Thread(() -> {
                try {
                    r.run();
                } finally {
                    threads.remove(Thread.currentThread());
                }
            }, base + role + "-" + counter.incrementAndGet());
            t.setDaemon(true);
            threads.add(t);
            return t;
        };
    }

    /** Live threads of this node. */
    public int live() {
        threads.removeIf(t -> !t.isAlive() && t.getState() != Thread.State.NEW);
        return threads.size();
    }

    /** Waits up to {@code millis} for every thread to end; returns the names of those still alive. */
    public List<String> awaitTermination(long millis) {
        return awaitTermination(millis, null);
    }

    /**
     * Waits up to {@code millis} for every thread but {@code except} (may be {@code null}) to end; returns the names
     * of those still alive, {@code except} left out.
     */
    public List<String> awaitTermination(long millis, Thread except) {
        long deadline = clock.nanoTime() + millis * 1_000_000L;
        for (Thread t : threads) {
            long left = (deadline - clock.nanoTime()) / 1_000_000L;
            if (left > 0 && t != Thread.currentThread() && t != except) {
                try {
                    t.join(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        List<String> alive = new ArrayList<>();
        for (Thread t : threads) {
            if (t.isAlive() && t != Thread.currentThread() && t != except) {
                alive.add(t.getName());
            }
        }
        return alive;
    }
}
