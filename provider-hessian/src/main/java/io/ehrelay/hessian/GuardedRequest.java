package io.ehrelay.hessian;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * One request on its thread: the JDK's exchange task, then what the handler says it is doing. The watchdog
 * interrupts the thread only under this object's lock, while the request is not being served.
 */
final class GuardedRequest implements Runnable {
    private final RequestGuard guard;
    private final Runnable exchange;
    /** When the JDK handed the request over. */
    final long createdNanos;
    private Thread thread;
    private RequestGuard.Step step = RequestGuard.Step.HEADERS;
    private long sinceNanos;
    private long deadlineNanos;
    private boolean dropped;
    private volatile long bytes;
    volatile InetSocketAddress remote;

    GuardedRequest(RequestGuard guard, Runnable exchange) {
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
        RequestGuard.CURRENT.set(this);
        try {
            exchange.run();
        } finally {
            RequestGuard.CURRENT.remove();
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
        enter(RequestGuard.Step.BODY, 0);
    }

    /** The body of {@code length} bytes is read next. */
    void body(long length) throws IOException {
        enter(RequestGuard.Step.BODY, length);
    }

    /** The request was read: it is served now, never interrupted. */
    void serving() throws IOException {
        enter(RequestGuard.Step.SERVING, 0);
    }

    /** An answer of {@code length} bytes is written next. */
    void answer(long length) throws IOException {
        enter(RequestGuard.Step.ANSWER, length);
    }

    /**
     * A refusal is written next, and what is left of the body is not wanted: the answer, and the JDK's
     * draining of the unread body after it, get {@link #REFUSAL_MILLIS} (at most {@code requestReadMillis}).
     */
    void refusing() throws IOException {
        enter(RequestGuard.Step.ANSWER, -1);
    }

    private synchronized void enter(RequestGuard.Step next, long length) throws IOException {
        if (guard == null) {
            return;
        }
        if (dropped) {
            throw new InterruptedIOException("request dropped: its " + step.text + " took too long");
        }
        step = next;
        sinceNanos = guard.clock.nanoTime();
        bytes = 0;
        deadlineNanos = next == RequestGuard.Step.SERVING ? Long.MAX_VALUE
                : length < 0 ? sinceNanos + Math.min(guard.readNanos, TimeUnit.MILLISECONDS.toNanos(RequestGuard.REFUSAL_MILLIS))
                : sinceNanos + guard.readNanos + length * 1_000_000_000L / RequestGuard.MIN_BYTES_PER_SECOND;
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

    synchronized RequestGuard.Step step() {
        return step;
    }

    synchronized long since() {
        return sinceNanos;
    }

    /** Bytes per second in the current step: 0 for headers and answers, whose progress is not seen. */
    synchronized double rate(long now) {
        if (step != RequestGuard.Step.BODY) {
            return 0;
        }
        return bytes * 1e9 / Math.max(1, now - sinceNanos);
    }

    /** Whether the request has been reading (headers, body or answer) for at least {@code nanos}. */
    synchronized boolean reading(long now, long nanos) {
        return thread != null && !dropped && step != RequestGuard.Step.SERVING && now - sinceNanos >= nanos;
    }

    synchronized boolean evictable(long now, long graceNanos) {
        return thread != null && !dropped && step != RequestGuard.Step.SERVING && now - sinceNanos >= graceNanos;
    }

    /** Drops the request when it is past its time; returns why, or {@code null}. */
    synchronized String dropIfOverdue(long now) {
        if (thread == null || dropped || step == RequestGuard.Step.SERVING || now - deadlineNanos < 0) {
            return null;
        }
        long took = TimeUnit.NANOSECONDS.toMillis(now - sinceNanos);
        String why = step == RequestGuard.Step.HEADERS ? "its headers did not arrive within " + took + " ms (requestReadMillis)"
                : "its " + step.text + " did not " + (step == RequestGuard.Step.ANSWER ? "go out" : "arrive") + " within "
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
        if (thread == null || dropped || step == RequestGuard.Step.SERVING) {
            return false;
        }
        dropped = true;
        thread.interrupt();
        return true;
    }
}
