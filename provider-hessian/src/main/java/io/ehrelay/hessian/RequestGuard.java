package io.ehrelay.hessian;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The executor of the listener's HTTP server, and the watchdog over what its threads read: each request's headers,
 * body and answer within its time ({@code requestReadMillis}, plus 1 ms per KiB), a refusal within
 * {@link #REFUSAL_MILLIS}; slow readers get threads of their own beside the {@code httpThreads}, up to
 * {@code maxHttpThreads}, and when those are all taken the slowest are dropped (interrupted, which closes the
 * connection; never while a request is being served), counted in {@code slowRequests}. The rules and why:
 * docs/hessian.md, "Slow and idle connections". The watchdog runs every {@link #TICK_MILLIS} ({@link #tick()}).
 * Thread-safe.
 */
final class RequestGuard implements Executor {

    private static final Logger LOG = LoggerFactory.getLogger(RequestGuard.class);
    private static final RateLimitedLog DROPS = new RateLimitedLog(LOG, 10_000);

    /** How often {@link #tick()} should run. */
    static final long TICK_MILLIS = 100;
    /** A request still arriving after this long gets a thread beside the {@code httpThreads}. */
    static final long SLOW_MILLIS = TICK_MILLIS;
    /** A reader this long in its step may be dropped to make room for waiting requests. */
    static final long GRACE_MILLIS = 1000;
    /**
     * The same for a request whose headers have not arrived yet, and for one that waits for a thread: an honest
     * peer sends its headers at once, in one packet.
     */
    static final long HEADERS_GRACE_MILLIS = 250;
    /** How long a request must have waited for a thread before a slow reader is dropped for it. */
    private static final long WAITED_NANOS = TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
    /** How long a refusal may take to go out, with the JDK's draining of the body it did not read. */
    static final long REFUSAL_MILLIS = 1000;
    /** The slowest rate a body (or an answer) may arrive at beyond the floor: 1 MiB/s, i.e. 1 ms per KiB. */
    static final long MIN_BYTES_PER_SECOND = 1 << 20;

    /** What a request is doing. */
    enum Step {
        /** Its line and headers (and a TLS handshake) are being read by the JDK. */
        HEADERS("headers"),
        /** The handler checks the request and reads its body. */
        BODY("body"),
        /** Being served: never interrupted. */
        SERVING("serving"),
        /** Its answer (or a refusal) is being written. */
        ANSWER("answer");

        final String text;

        Step(String text) {
            this.text = text;
        }
    }

    static final ThreadLocal<GuardedRequest> CURRENT = new ThreadLocal<>();
    /** Outside a guard (no watchdog): nothing is bounded. */
    private static final GuardedRequest UNGUARDED = new GuardedRequest(null, null);

    private final ThreadPoolExecutor pool;
    private final Queue queue = new Queue();
    final Set<GuardedRequest> running = ConcurrentHashMap.newKeySet();
    /** Requests handed to the pool and not finished: running or waiting. */
    final AtomicInteger unfinished = new AtomicInteger();
    private final int threads;
    private final int maxThreads;
    /** Requests that have been reading for {@link #SLOW_MILLIS} at the last tick. */
    private volatile int slowReaders;
    final long readNanos;
    private final long graceNanos;
    private final long headersGraceNanos;
    final Clock clock;
    private final TransportMetrics.Count slowRequests;
    private final String node;

    /**
     * @param threads     kept threads ({@code httpThreads})
     * @param maxThreads  the most threads ({@code maxHttpThreads})
     * @param readMillis  {@code requestReadMillis}
     * @param node        the CacheManager's name, for the log
     */
    RequestGuard(int threads, int maxThreads, long readMillis, ThreadFactory factory, Clock clock,
                 TransportMetrics metrics, String node) {
        this.threads = threads;
        this.maxThreads = maxThreads;
        this.readNanos = TimeUnit.MILLISECONDS.toNanos(readMillis);
        this.graceNanos = TimeUnit.MILLISECONDS.toNanos(Math.min(GRACE_MILLIS, readMillis));
        this.headersGraceNanos = TimeUnit.MILLISECONDS.toNanos(Math.min(HEADERS_GRACE_MILLIS, readMillis));
        this.clock = clock;
        this.node = node;
        this.slowRequests = metrics.count(MetricNames.SLOW_REQUESTS); // registered now: monitoring sees it at 0
        this.pool = new ThreadPoolExecutor(threads, maxThreads, 30, TimeUnit.SECONDS, queue, factory,
                (task, executor) -> {
                    if (executor.isShutdown()) {
                        throw new RejectedExecutionException("the listener stopped");
                    }
                    queue.enqueue(task); // all maxHttpThreads busy: wait (and make the watchdog free one)
                });
        this.pool.allowCoreThreadTimeOut(true);
    }

    @Override
    public void execute(Runnable exchange) {
        unfinished.incrementAndGet();
        try {
            pool.execute(new GuardedRequest(this, exchange));
        } catch (RuntimeException e) {
            unfinished.decrementAndGet();
            throw e;
        }
    }

    /** The request the calling thread serves (a no-op outside a guard). */
    static GuardedRequest current() {
        GuardedRequest r = CURRENT.get();
        return r == null ? UNGUARDED : r;
    }

    /**
     * Drops the requests past their time; gives slow readers threads of their own beside the {@code httpThreads};
     * and while requests wait for a thread with all {@code maxHttpThreads} taken, drops the slowest readers.
     */
    void tick() {
        long now = clock.nanoTime();
        long slowNanos = TimeUnit.MILLISECONDS.toNanos(SLOW_MILLIS);
        List<Candidate> candidates = new ArrayList<>();
        int freeing = 0;
        int slow = 0;
        for (GuardedRequest r : running) {
            String why = r.dropIfOverdue(now);
            if (why != null) {
                dropped(r, why);
                freeing++;
            } else if (r.dropped()) {
                freeing++; // dropped earlier, its thread about to be free
            } else if (r.reading(now, slowNanos)) {
                slow++;
                if (r.evictable(now, r.step() == Step.HEADERS ? headersGraceNanos : graceNanos)) {
                    candidates.add(new Candidate(r, r.rate(now), r.since()));
                }
            }
        }
        slowReaders = slow;
        // requests that found every thread busy (not one an idle thread is about to take); while slow readers hold
        // the threads the newest is served first (Queue) and one that waited twice the grace period is dropped
        // unread (its thread closes it at once): a flood of connections that send half a request is neither
        // served before a later honest request nor kept open
        int queued = 0;
        int waiting = 0;
        for (Runnable task : queue) {
            GuardedRequest q = (GuardedRequest) task;
            if (slow > 0 && now - q.createdNanos >= 2 * graceNanos && q.dropWaiting()) {
                dropped(q, "it waited " + TimeUnit.NANOSECONDS.toMillis(now - q.createdNanos) + " ms for one of the "
                        + maxThreads + " HTTP threads (maxHttpThreads) while slow readers held them");
                continue;
            }
            queued++;
            if (now - q.createdNanos >= WAITED_NANOS) {
                waiting++;
            }
        }
        // while slow readers hold threads, a thread for each of them and for each request that waits (which
        // may be slow too: nothing tells until it runs), up to maxHttpThreads; httpThreads again after
        int core = slow == 0 ? threads : Math.min(maxThreads, threads + slow + queued);
        if (pool.getCorePoolSize() != core && !pool.isShutdown()) {
            pool.setCorePoolSize(core); // starts threads for the requests that wait
        }
        int toFree = waiting - freeing;
        if (toFree <= 0 || candidates.isEmpty() || pool.getPoolSize() < maxThreads) {
            return;
        }
        // headers and answers first (no progress seen), then bodies by rate; the longest in its step first
        candidates.sort((x, y) -> {
            int byRate = Double.compare(x.rate, y.rate);
            return byRate != 0 ? byRate : Long.compare(x.since, y.since);
        });
        for (int i = 0; i < candidates.size() && toFree > 0; i++) {
            GuardedRequest r = candidates.get(i).request;
            Step step = r.step();
            if (r.drop()) {
                dropped(r, "its " + step.text + " still " + (step == Step.ANSWER ? "going out" : "arriving")
                        + " after " + TimeUnit.NANOSECONDS.toMillis(now - candidates.get(i).since) + " ms while "
                        + waiting + " request(s) waited for one of the " + maxThreads
                        + " HTTP threads (maxHttpThreads)");
                toFree--;
            }
        }
    }

    /** A request as the watchdog saw it when it looked for one to drop. */
    private static final class Candidate {
        final GuardedRequest request;
        final double rate;
        final long since;

        Candidate(GuardedRequest request, double rate, long since) {
            this.request = request;
            this.rate = rate;
            this.since = since;
        }
    }

    private void dropped(GuardedRequest r, String why) {
        slowRequests.mark();
        InetSocketAddress from = r.remote;
        String host = from == null ? "?" : from.getAddress().getHostAddress();
        DROPS.warn("slow:" + host, "ehrelay: dropped a request from {} to CacheManager {}: {} (counted in slowRequests)",
                from == null ? "(headers unread)" : from.toString(), node, why);
    }

    /** Stops the threads (interrupting those still reading). */
    void shutdown() {
        pool.shutdownNow();
    }

    /**
     * Hands a request to an idle thread if one is left for it (counting the requests already handed over). Else,
     * while slow readers hold threads, refuses it, so that the pool starts another thread (up to its maximum, past
     * which the rejection handler queues it after all); without slow readers it waits for one of the
     * {@code httpThreads}, as any busy server's requests do.
     */
    private final class Queue extends LinkedBlockingDeque<Runnable> {
        private static final long serialVersionUID = 1L;

        /**
         * The next request for a free thread: the oldest, as any server serves them; but the newest while slow
         * readers hold threads, so that a request arriving behind a flood of half-sent ones (queued first, all at
         * once) is not served after all of them. The flood's requests, left waiting, are dropped by the watchdog.
         */
        @Override
        public Runnable take() throws InterruptedException {
            return slowReaders > 0 ? takeLast() : takeFirst();
        }

        @Override
        public Runnable poll(long timeout, TimeUnit unit) throws InterruptedException {
            return slowReaders > 0 ? pollLast(timeout, unit) : pollFirst(timeout, unit);
        }

        @Override
        public boolean offer(Runnable task) {
            int size = pool.getPoolSize();
            if (size >= unfinished.get()) {
                return super.offer(task); // an idle thread takes it
            }
            // a thread of its own while slow readers hold some; else wait for one of the httpThreads
            return size >= Math.min(maxThreads, threads + slowReaders) && super.offer(task);
        }

        void enqueue(Runnable task) {
            super.offer(task);
        }
    }
}
