package io.ehrelay.hessian;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
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
 * The executor of the listener's HTTP server, and the watchdog over what its threads read.
 *
 * <p>The JDK's server hands a connection to its executor once the connection's first bytes arrive, and reads the
 * request's line and headers (and, for HTTPS, the TLS handshake) on that thread, blocking; the handler then reads
 * the body on it too. A request whose bytes stop arriving therefore holds a thread for as long as its sender
 * likes. Here:
 * <ul>
 * <li><b>time</b>: the headers must arrive within {@code requestReadMillis} of a thread taking the request, the
 * body within {@code requestReadMillis} plus 1 ms per KiB of its {@code Content-Length} (at least 1 MiB/s), the
 * answer likewise, a refusal within {@link #REFUSAL_MILLIS} (the JDK's server drains the body a refused request
 * did not send, blocking); a request past its time is dropped;</li>
 * <li><b>threads</b>: {@code httpThreads} threads serve requests, as many as without slow readers; while
 * requests are still arriving after {@link #SLOW_MILLIS} (slow readers), each of them, and each request that waits
 * for a thread meanwhile, gets a thread of its own beside those, up to {@code maxHttpThreads} threads in all, so
 * that slow readers do not hold the threads the others need; when all
 * {@code maxHttpThreads} are taken and requests wait, the slowest readers (in their current step for at least
 * {@link #GRACE_MILLIS}, or {@link #HEADERS_GRACE_MILLIS} while still in their headers: headers or answers first,
 * then bodies by bytes per second) are dropped to make room; meanwhile the newest waiting request takes a freed
 * thread first, and one that waited twice {@link #GRACE_MILLIS} is dropped unread; so honest requests, whose bytes
 * arrive at once, get a thread within about half a second however many half-sent requests came before them.</li>
 * </ul>
 * Dropping interrupts the reading thread: socket channels are interruptible, so the read fails at once, the
 * channel is closed, and the JDK closes the connection (also during the JDK's own reads of headers and of the
 * TLS handshake). A request is never interrupted while it is being served (between reading its body and writing
 * its answer). Drops are counted in {@code slowRequests} and logged (rate-limited). The watchdog runs every
 * {@link #TICK_MILLIS} on the transport's background thread ({@link #tick()}). Thread-safe.
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

    private static final ThreadLocal<Request> CURRENT = new ThreadLocal<>();
    /** Outside a guard (no watchdog): nothing is bounded. */
    private static final Request UNGUARDED = new Request(null, null);

    private final ThreadPoolExecutor pool;
    private final Queue queue = new Queue();
    private final Set<Request> running = ConcurrentHashMap.newKeySet();
    /** Requests handed to the pool and not finished: running or waiting. */
    private final AtomicInteger unfinished = new AtomicInteger();
    private final int threads;
    private final int maxThreads;
    /** Requests that have been reading for {@link #SLOW_MILLIS} at the last tick. */
    private volatile int slowReaders;
    private final long readNanos;
    private final long graceNanos;
    private final long headersGraceNanos;
    private final Clock clock;
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
            pool.execute(new Request(this, exchange));
        } catch (RuntimeException e) {
            unfinished.decrementAndGet();
            throw e;
        }
    }

    /** The request the calling thread serves (a no-op outside a guard). */
    static Request current() {
        Request r = CURRENT.get();
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
        for (Request r : running) {
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
            Request q = (Request) task;
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
            Request r = candidates.get(i).request;
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
        final Request request;
        final double rate;
        final long since;

        Candidate(Request request, double rate, long since) {
            this.request = request;
            this.rate = rate;
            this.since = since;
        }
    }

    private void dropped(Request r, String why) {
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
     * One request on its thread: the JDK's exchange task, then what the handler says it is doing. The watchdog
     * interrupts the thread only under this object's lock, while the request is not being served.
     */
    static final class Request implements Runnable {
        private final RequestGuard guard;
        private final Runnable exchange;
        /** When the JDK handed the request over. */
        final long createdNanos;
        private Thread thread;
        private Step step = Step.HEADERS;
        private long sinceNanos;
        private long deadlineNanos;
        private boolean dropped;
        private volatile long bytes;
        volatile InetSocketAddress remote;

        Request(RequestGuard guard, Runnable exchange) {
            this.guard = guard;
            this.exchange = exchange;
            this.createdNanos = guard == null ? 0 : guard.clock.nanoTime();
        }

        @Override
        public void run() {
            synchronized (this) {
                thread = Thread.currentThread();
                sinceNanos = guard.clock.nanoTime();
                deadlineNanos = sinceNanos + guard.readNanos;
                if (dropped) {
                    thread.interrupt(); // dropped while it waited: the JDK's first read fails, the connection closes
                }
            }
            guard.running.add(this);
            CURRENT.set(this);
            try {
                exchange.run();
            } finally {
                CURRENT.remove();
                guard.running.remove(this);
                guard.unfinished.decrementAndGet();
                synchronized (this) {
                    thread = null;
                }
                Thread.interrupted(); // an interrupt meant for this request ends with it
            }
        }

        /** The handler has the headers: it now reads (or refuses) the body, within the floor for now. */
        void headersRead(InetSocketAddress from) throws IOException {
            remote = from;
            enter(Step.BODY, 0);
        }

        /** The body of {@code length} bytes is read next. */
        void body(long length) throws IOException {
            enter(Step.BODY, length);
        }

        /** The request was read: it is served now, never interrupted. */
        void serving() throws IOException {
            enter(Step.SERVING, 0);
        }

        /** An answer of {@code length} bytes is written next. */
        void answer(long length) throws IOException {
            enter(Step.ANSWER, length);
        }

        /**
         * A refusal is written next, and what is left of the body is not wanted: the answer, and the JDK's
         * draining of the unread body after it, get {@link #REFUSAL_MILLIS} (at most {@code requestReadMillis}).
         */
        void refusing() throws IOException {
            enter(Step.ANSWER, -1);
        }

        private synchronized void enter(Step next, long length) throws IOException {
            if (guard == null) {
                return;
            }
            if (dropped) {
                throw new InterruptedIOException("request dropped: its " + step.text + " took too long");
            }
            step = next;
            sinceNanos = guard.clock.nanoTime();
            bytes = 0;
            deadlineNanos = next == Step.SERVING ? Long.MAX_VALUE
                    : length < 0 ? sinceNanos + Math.min(guard.readNanos, TimeUnit.MILLISECONDS.toNanos(REFUSAL_MILLIS))
                    : sinceNanos + guard.readNanos + length * 1_000_000_000L / MIN_BYTES_PER_SECOND;
        }

        /** Counts the body's bytes as they are read (the watchdog's measure of progress). */
        InputStream counting(InputStream body) {
            if (guard == null) {
                return body;
            }
            return new FilterInputStream(body) {
                @Override
                public int read() throws IOException {
                    int b = super.read();
                    if (b >= 0) {
                        bytes++;
                    }
                    return b;
                }

                @Override
                public int read(byte[] b, int off, int len) throws IOException {
                    int n = super.read(b, off, len);
                    if (n > 0) {
                        bytes += n;
                    }
                    return n;
                }
            };
        }

        /** Whether the watchdog dropped this request (its reads fail from then on). */
        synchronized boolean dropped() {
            return dropped;
        }

        synchronized Step step() {
            return step;
        }

        synchronized long since() {
            return sinceNanos;
        }

        /** Bytes per second in the current step: 0 for headers and answers, whose progress is not seen. */
        synchronized double rate(long now) {
            if (step != Step.BODY) {
                return 0;
            }
            return bytes * 1e9 / Math.max(1, now - sinceNanos);
        }

        /** Whether the request has been reading (headers, body or answer) for at least {@code nanos}. */
        synchronized boolean reading(long now, long nanos) {
            return thread != null && !dropped && step != Step.SERVING && now - sinceNanos >= nanos;
        }

        synchronized boolean evictable(long now, long graceNanos) {
            return thread != null && !dropped && step != Step.SERVING && now - sinceNanos >= graceNanos;
        }

        /** Drops the request when it is past its time; returns why, or {@code null}. */
        synchronized String dropIfOverdue(long now) {
            if (thread == null || dropped || step == Step.SERVING || now - deadlineNanos < 0) {
                return null;
            }
            long took = TimeUnit.NANOSECONDS.toMillis(now - sinceNanos);
            String why = step == Step.HEADERS ? "its headers did not arrive within " + took + " ms (requestReadMillis)"
                    : "its " + step.text + " did not " + (step == Step.ANSWER ? "go out" : "arrive") + " within "
                    + took + " ms (requestReadMillis plus 1 s per MiB)";
            return drop() ? why : null;
        }

        /** Drops a request that waits for a thread: it will close its connection unread when it runs. */
        synchronized boolean dropWaiting() {
            if (thread != null || dropped) {
                return false;
            }
            dropped = true;
            return true;
        }

        /** Interrupts the thread reading the request, which closes its connection; false if it may not be. */
        synchronized boolean drop() {
            if (thread == null || dropped || step == Step.SERVING) {
                return false;
            }
            dropped = true;
            thread.interrupt();
            return true;
        }
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
