package io.ehrelay.internal.rpc;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import io.ehrelay.internal.Backoff;
import io.ehrelay.internal.Futures;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;

/**
 * A request/response transport's sender to one peer: sends in order on one thread (ending when idle), at most
 * {@code outboundMaxBytes} waiting; looks the peer up once, and after it went away waits a backoff before trying
 * again (sends fail at once meanwhile, {@link #isReachable()} stays true to the facts). A synchronous send with
 * nothing queued runs on the caller's thread. Time: the given {@link Clock}. Each transport's subclass makes the
 * calls ({@code <Transport>PeerChannel}; docs/writing-a-transport.md). Thread-safe.
 */
public abstract class PeerChannel {

    private final String endpoint;
    private final long outboundMaxBytes;
    private final Clock clock;
    private final ThreadPoolExecutor sender;
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicInteger pending = new AtomicInteger();
    private final ReentrantLock transmitting = new ReentrantLock();
    private volatile boolean connected;
    /** The deadline of the batch being transmitted (0: none); written and read under {@code transmitting}. */
    private long deadlineNanos;
    private volatile boolean reachable;
    /** When a call to the peer last succeeded ({@link Clock#nanoTime}). */
    private volatile long lastSuccessNanos;
    /** Open until the first connection attempt ended, either way. */
    private final CountDownLatch firstAttempt = new CountDownLatch(1);
    private final Backoff backoff;
    /** Why the peer could not be reached last (said while the backoff lasts), or {@code null}. */
    private volatile Exception lastFailure;

    /** True while a probe of this peer runs. */
    private final AtomicBoolean probing = new AtomicBoolean();

    /**
     * @param retryMaxMillis the longest wait between attempts to reach the peer (the backoff starts at 100 ms)
     * @param clock          the node's time source ({@link Clock#SYSTEM} in production)
     */
    protected PeerChannel(String endpoint, long outboundMaxBytes, long retryMaxMillis, ThreadFactory threads,
                          Clock clock) {
        this.endpoint = endpoint;
        this.outboundMaxBytes = outboundMaxBytes;
        this.clock = clock;
        this.backoff = Backoff.upTo(retryMaxMillis, clock);
        this.sender = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threads);
        this.sender.allowCoreThreadTimeOut(true);
    }

    /** Finds or opens the peer (e.g. an RMI lookup); called when not connected, from one thread at a time. */
    protected abstract void connect() throws Exception;

    /**
     * Sends a batch: applied by the peer on return with {@code acknowledge}, else at least queued there. The array
     * is shared with the other peers' sends of the same batch ({@link io.ehrelay.spi.Batch#toByteArray()}): read
     * it, keep it if needed, never write it.
     */
    protected abstract void transmit(byte[] batch, boolean acknowledge) throws Exception;

    /**
     * Sends a batch, as {@link #transmit(byte[], boolean)}, which it calls with the batch's array. A transport
     * that can write the batch's bytes from its buffer ({@link io.ehrelay.spi.Batch#buffer()}) while sending —
     * without keeping them after returning — overrides it and saves the copy of every batch into an array.
     */
    protected void transmit(Batch batch, boolean acknowledge) throws Exception {
        transmit(batch.toByteArray(), acknowledge);
    }

    /** Fetches a cache's content from the peer, chunk by chunk. */
    protected abstract void transferState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink)
            throws Exception;

    /**
     * For {@link #transmit}: how long the call may take, {@code defaultMillis} or less when the batch carries a
     * deadline (a synchronous put's timeout); at least 1.
     */
    protected final int callTimeoutMillis(int defaultMillis) {
        long deadline = deadlineNanos;
        if (deadline == 0) {
            return defaultMillis;
        }
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanoTime());
        return (int) Math.max(1, Math.min(defaultMillis, left));
    }

    /**
     * A cheap call that succeeds only while the peer is up (e.g. its {@code hello}), made when the peer has been
     * idle for a while ({@link #probeIfIdle}): a peer that crashed while nothing was sent to it is then no longer
     * {@linkplain #isReachable() reachable} within seconds, as stock drops a peer whose lookup fails. A transport
     * whose membership notices a departed peer by itself keeps this default, which makes no call.
     *
     * @return whether a call was made
     */
    protected boolean probe() throws Exception {
        return false;
    }

    /** Whether a failure means the peer (or what was found by {@link #connect}) is gone. */
    protected abstract boolean peerGone(Exception failure);

    /** Forgets what {@link #connect} found. */
    protected abstract void disconnect();

    public final String endpoint() {
        return endpoint;
    }

    public final boolean isReachable() {
        return reachable;
    }

    /** {@link #isReachable()}, after waiting up to {@code millis} for the first connection attempt to end. */
    public final boolean isReachableWithin(long millis) throws InterruptedException {
        if (!reachable) {
            firstAttempt.await(millis, TimeUnit.MILLISECONDS);
        }
        return reachable;
    }

    /**
     * Probes the peer ({@link #probe}) on the calling thread — never the sender thread, so a slow probe delays no
     * send — when it is reachable, nothing is waiting for it and no call to it has succeeded for
     * {@code idleMillis}. Only a failure that says the peer is gone ({@link #peerGone}: refused, no route) makes
     * it unreachable, a slow answer does not; it is then tried again in the background as {@link #connectAhead}
     * does.
     */
    public final void probeIfIdle(long idleMillis, ScheduledExecutorService retries) {
        if (!reachable || pending.get() > 0 || !connected
                || clock.nanoTime() - lastSuccessNanos < TimeUnit.MILLISECONDS.toNanos(idleMillis)
                || !probing.compareAndSet(false, true)) {
            return;
        }
        try {
            call(this::probe);
        } catch (Exception e) {
            if (!reachable) {
                connectAhead(retries);
            }
        } finally {
            probing.set(false);
        }
    }

    /** Connects ahead of the first event; while the peer cannot be reached, tries again after each backoff. */
    public final void connectAhead(ScheduledExecutorService retries) {
        try {
            sender.execute(() -> {
                try {
                    ensureConnected();
                } catch (Exception e) {
                    long wait = Math.max(10, backoff.remainingMillis());
                    try {
                        retries.schedule(() -> connectAhead(retries), wait, TimeUnit.MILLISECONDS);
                    } catch (RejectedExecutionException closed) {
                        // transport stopped
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * Sends a batch. With {@code acknowledge} the future completes when the peer applied it; otherwise when the
     * peer took it. The batch's buffer is read before the future completes (the dispatcher abandons a buffer
     * whose send timed out), so the copy is made on the sender thread, off the dispatcher's.
     */
    public final CompletableFuture<Void> send(Batch batch, boolean acknowledge) {
        int length = batch.length();
        long queued = queuedBytes.addAndGet(length);
        if (queued > outboundMaxBytes && queued != length) {
            queuedBytes.addAndGet(-length);
            return Futures.failed(new IOException("more than " + outboundMaxBytes
                    + " bytes waiting for peer " + endpoint));
        }
        Send task = new Send(batch, length, acknowledge);
        pending.incrementAndGet();
        if (acknowledge && pending.get() == 1 && transmitting.tryLock()) {
            try {
                task.run();
            } finally {
                transmitting.unlock();
            }
            return task.future;
        }
        try {
            sender.execute(new Queued(task));
        } catch (RejectedExecutionException e) {
            task.fail(new IOException("channel to peer " + endpoint + " is closed"));
        }
        return task.future;
    }

    /** A send waiting for the sender thread. */
    private final class Queued implements Runnable {
        final Send task;

        Queued(Send task) {
            this.task = task;
        }

        @Override
        public void run() {
            transmitting.lock();
            try {
                task.run();
            } finally {
                transmitting.unlock();
            }
        }
    }

    /** One batch and its future. */
    private final class Send {
        final Batch batch;
        final int length;
        final boolean acknowledge;
        final CompletableFuture<Void> future = new CompletableFuture<>();

        Send(Batch batch, int length, boolean acknowledge) {
            this.batch = batch;
            this.length = length;
            this.acknowledge = acknowledge;
        }

        void run() {
            try {
                if (!future.isDone()) {
                    deadlineNanos = batch.deadlineNanos();
                    try {
                        call(() -> transmit(batch, acknowledge));
                    } finally {
                        deadlineNanos = 0;
                    }
                    future.complete(null);
                }
            } catch (Exception | LinkageError e) {
                future.completeExceptionally(e);
            } finally {
                done();
            }
        }

        void fail(Exception e) {
            future.completeExceptionally(e);
            done();
        }

        private void done() {
            queuedBytes.addAndGet(-length);
            pending.decrementAndGet();
        }
    }

    /** Fetches a cache's content, in the calling thread (the node's bootstrap thread). */
    public final void fetchState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink)
            throws Exception {
        call(() -> transferState(cacheName, maxChunkBytes, sink));
    }

    @FunctionalInterface
    private interface Call {
        void run() throws Exception;
    }

    private void call(Call c) throws Exception {
        ensureConnected();
        try {
            c.run();
            succeeded();
        } catch (Exception e) {
            failed(e);
            throw e;
        }
    }

    private synchronized void ensureConnected() throws Exception {
        if (connected) {
            return;
        }
        long wait = backoff.remainingMillis();
        if (wait > 0) {
            // the attempt that failed may have been made ahead, where nobody heard why: say it with every refusal
            Exception last = lastFailure;
            throw new IOException("peer " + endpoint + " unreachable" + (last == null ? "" : " (" + why(last) + ")")
                    + "; next attempt in " + wait + " ms");
        }
        try {
            connect();
            connected = true;
            succeeded();
        } catch (Exception e) {
            failed(e);
            throw e;
        } finally {
            firstAttempt.countDown();
        }
    }

    /** A failure as the backoff's refusal repeats it: without the peer's name where it starts with it. */
    private String why(Exception e) {
        String m = e instanceof RpcException ? e.getMessage() : e.toString();
        String self = "peer " + endpoint + " ";
        return m != null && m.startsWith(self) ? m.substring(self.length()) : String.valueOf(m);
    }

    private synchronized void succeeded() {
        lastSuccessNanos = clock.nanoTime();
        reachable = true;
        lastFailure = null;
        backoff.succeeded();
    }

    private synchronized void failed(Exception e) {
        if (!connected || peerGone(e)) {
            lastFailure = e;
            reachable = false;
            connected = false;
            disconnect();
            backoff.failed();
        }
    }

    /** Lets the next send connect at once (the peer announced itself again). */
    public final void retryNow() {
        backoff.retryNow();
    }

    /**
     * Stops the sender thread, waiting up to {@code waitMillis} for what is queued; the rest fails. Then lets go
     * of what {@link #connect} found ({@link #disconnect}).
     */
    public final void close(long waitMillis) {
        sender.shutdown();
        try {
            if (!sender.awaitTermination(waitMillis, TimeUnit.MILLISECONDS)) {
                failAll(sender.shutdownNow());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failAll(sender.shutdownNow());
        }
        disconnect();
    }

    private void failAll(List<Runnable> never) {
        for (Runnable r : never) {
            if (r instanceof Queued) {
                ((Queued) r).task.fail(new IOException("channel to peer " + endpoint + " closed"));
            }
        }
    }

    /** The relay protocol's state transfer: open, then page until the peer says it is complete. */
    public static void fetchThroughRelay(RpcCalls relay, String cacheName, int maxChunkBytes,
                                         InboundHandler.ChunkSink sink) throws Exception {
        long id = relay.openState(cacheName);
        for (byte[] chunk = relay.nextState(id, maxChunkBytes); chunk != null;
             chunk = relay.nextState(id, maxChunkBytes)) {
            sink.accept(chunk);
        }
    }
}
