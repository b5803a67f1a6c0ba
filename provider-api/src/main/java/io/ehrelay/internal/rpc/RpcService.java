package io.ehrelay.internal.rpc;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;

/**
 * The callee's side of the calls: one sender's batches applied in arrival order, posted ones by at most
 * {@value #APPLY_THREADS} shared apply threads, a delivered one on the calling thread when nothing of its sender
 * waits; unapplied batches bounded per sender ({@value #POSTED_MAX_BYTES} B) and in all
 * ({@value #NODE_POSTED_MAX_BYTES} B), nothing kept per sender once idle; at most {@value #MAX_TRANSFERS} state
 * transfers open (docs/wire-format.md, "The callee's side"). Thread-safe.
 */
public final class RpcService {

    public static final int MAX_TRANSFERS = 32;
    public static final int TRANSFER_IDLE_SECONDS = 120;
    /** Bytes of posted batches a receiver holds per sender before the next post waits. */
    public static final int POSTED_MAX_BYTES = 4 << 20;
    /**
     * Bytes of posted batches a receiver holds for all senders together before the next post waits (a batch
     * larger than this takes all of it).
     */
    public static final int NODE_POSTED_MAX_BYTES = 32 << 20;
    /** The most threads applying posted batches at once, however many senders post. */
    public static final int APPLY_THREADS = 4;
    /** Batches one sender's turn applies before the pool thread moves on to other senders. */
    private static final int TURN = 16;

    private static final Runnable NOTHING = () -> { };

    private final InboundHandler inbound;
    private final int maxFrameBytes;
    private final ThreadPoolExecutor pool;
    private final Semaphore nodeRoom = new Semaphore(NODE_POSTED_MAX_BYTES);
    private final long postTimeoutMillis;
    private final Consumer<String> onHello;
    private final Clock clock;
    private final Map<String, Applier> appliers = new ConcurrentHashMap<>();
    private final Map<Long, Transfer> transfers = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
    private volatile boolean closed;

    /**
     * @param postTimeoutMillis how long a post waits for room; keep it below the callers' read timeout, so that
     *                          they hear why it failed
     * @param onHello called with a peer's endpoint when it says it is up (e.g. to end a backoff towards it)
     * @param clock   the node's time source: idle state transfers, the wait for room and for the apply threads at close
     */
    public RpcService(InboundHandler inbound, int maxFrameBytes, ThreadFactory applyThreads,
                        long postTimeoutMillis, Consumer<String> onHello, Clock clock) {
        this.onHello = onHello;
        this.clock = clock;
        this.inbound = inbound;
        this.maxFrameBytes = maxFrameBytes;
        this.pool = new ThreadPoolExecutor(APPLY_THREADS, APPLY_THREADS, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), applyThreads);
        this.pool.allowCoreThreadTimeOut(true);
        this.postTimeoutMillis = postTimeoutMillis;
    }

    public void hello(String fromEndpoint) throws RpcException {
        if (closed) {
            throw new RpcException("ehrelay: node is shutting down");
        }
        if (fromEndpoint != null) {
            onHello.accept(fromEndpoint);
        }
    }

    public void deliver(String fromEndpoint, byte[] batch) throws RpcException {
        if (batch == null) {
            throw new RpcException("no batch");
        }
        deliver(fromEndpoint, ByteBuffer.wrap(batch));
    }

    /** As {@link #deliver(String, byte[])}, for a batch in part of an array (its position to its limit). */
    public void deliver(String fromEndpoint, ByteBuffer batch) throws RpcException {
        deliver(fromEndpoint, batch, NOTHING);
    }

    /**
     * As {@link #deliver(String, ByteBuffer)}, and runs {@code done} once this service no longer reads the batch's
     * bytes — after it was applied or refused, even when this call returns earlier (interrupted) — so that the
     * caller may reuse its array. Runs it exactly once, unless the service is closed with the batch still queued
     * (then never: its array is left to the garbage collector).
     */
    public void deliver(String fromEndpoint, ByteBuffer batch, Runnable done) throws RpcException {
        boolean handedOff = false;
        Future<?> applied;
        try {
            if (batch == null || !batch.hasRemaining()) {
                throw new RpcException("no batch");
            }
            batch = batch.slice();
            Applier a = acquire(fromEndpoint);
            try {
                if (a.tryApplyInline(batch)) {
                    return;
                }
                applied = a.submit(batch, true, done);
                handedOff = true;
            } finally {
                release(a);
            }
        } finally {
            if (!handedOff) {
                done.run();
            }
        }
        try {
            applied.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof MalformedFrameException) {
                // counted and logged by provider-api; the caller learns why
                throw new RpcException("ehrelay: batch rejected: " + cause.getMessage());
            }
            throw new RpcException("ehrelay: batch not applied: " + cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RpcException("ehrelay: interrupted");
        }
    }

    public void post(String fromEndpoint, byte[] batch) throws RpcException {
        if (batch == null) {
            throw new RpcException("no batch");
        }
        post(fromEndpoint, ByteBuffer.wrap(batch));
    }

    /** As {@link #post(String, byte[])}, for a batch in part of an array (its position to its limit). */
    public void post(String fromEndpoint, ByteBuffer batch) throws RpcException {
        post(fromEndpoint, batch, NOTHING);
    }

    /**
     * As {@link #post(String, ByteBuffer)}, and runs {@code done} once this service no longer reads the batch's
     * bytes: after it was applied (or found malformed), or at once when it is refused. Runs it exactly once,
     * unless the service is closed with the batch still queued (then never: its array is left to the garbage
     * collector).
     */
    public void post(String fromEndpoint, ByteBuffer batch, Runnable done) throws RpcException {
        boolean handedOff = false;
        try {
            if (batch == null || !batch.hasRemaining()) {
                throw new RpcException("no batch");
            }
            batch = batch.slice();
            Applier a = acquire(fromEndpoint);
            try {
                a.submit(batch, false, done);
                handedOff = true;
            } finally {
                release(a);
            }
        } finally {
            if (!handedOff) {
                done.run();
            }
        }
    }

    public long openState(String cacheName) throws RpcException {
        expireIdle();
        if (transfers.size() >= MAX_TRANSFERS) {
            throw new RpcException("ehrelay: " + MAX_TRANSFERS + " state transfers already open; retry later");
        }
        InboundHandler.StateCursor cursor;
        try {
            cursor = inbound.openState(cacheName);
        } catch (IllegalArgumentException e) {
            throw new RpcException("ehrelay: " + e.getMessage());
        }
        long id = ids.incrementAndGet();
        transfers.put(id, new Transfer(cursor, clock.nanoTime()));
        return id;
    }

    public byte[] nextState(long transferId, int maxChunkBytes) throws RpcException {
        Transfer t = transfers.get(transferId);
        if (t == null) {
            throw new RpcException("ehrelay: no open state transfer " + transferId + " (expired or finished)");
        }
        synchronized (t) {
            t.lastUsed = clock.nanoTime();
            byte[] chunk = t.cursor.next(Math.max(1, Math.min(maxChunkBytes, maxFrameBytes / 2)));
            if (chunk == null) {
                transfers.remove(transferId);
            }
            return chunk;
        }
    }

    private void expireIdle() {
        long cutoff = clock.nanoTime() - TimeUnit.SECONDS.toNanos(TRANSFER_IDLE_SECONDS);
        for (Iterator<Transfer> it = transfers.values().iterator(); it.hasNext(); ) {
            if (it.next().lastUsed - cutoff < 0) {
                it.remove();
            }
        }
    }

    /** Open state transfers, for tests and diagnostics. */
    public int openTransfers() {
        return transfers.size();
    }

    /**
     * The sender's applier, with one more use counted: it stays in the map, and keeps its place in the sender's
     * order, until every use (a call in progress, a batch waiting or being applied) is released.
     */
    private Applier acquire(String from) throws RpcException {
        if (closed) {
            throw new RpcException("ehrelay: node is shutting down");
        }
        return appliers.compute(from == null ? "?" : from, (k, v) -> {
            Applier a = v == null ? new Applier(k) : v;
            a.uses.incrementAndGet();
            return a;
        });
    }

    /** Ends one use of {@code a}; the last one frees what is kept for its sender. */
    private void release(Applier a) {
        if (a.uses.decrementAndGet() == 0) {
            appliers.computeIfPresent(a.from, (k, v) -> v == a && a.uses.get() == 0 ? null : v);
        }
    }

    /** Senders with batches waiting, being applied or a call in progress (for tests and diagnostics). */
    public int activeSenders() {
        return appliers.size();
    }

    /** Stops the apply threads; what they still hold is applied first, up to {@code waitMillis}. */
    public void close(long waitMillis) {
        closed = true;
        long until = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        // senders' turns re-submit themselves until their queues are empty: wait for that, then stop the pool
        while (!appliers.isEmpty() && clock.nanoTime() - until < 0) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        pool.shutdown();
        try {
            if (!pool.awaitTermination(Math.max(0, until - clock.nanoTime()), TimeUnit.NANOSECONDS)) {
                pool.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            pool.shutdownNow();
        }
        transfers.clear();
    }

    /** One sender's batches, applied in order, one at a time, on the shared pool. */
    private final class Applier {
        final String from;
        final Semaphore room = new Semaphore(POSTED_MAX_BYTES);
        final AtomicInteger pending = new AtomicInteger();
        final AtomicInteger uses = new AtomicInteger();
        final ReentrantLock applying = new ReentrantLock();
        final ConcurrentLinkedQueue<Runnable> queue = new ConcurrentLinkedQueue<>();
        /** True while a turn of this sender is on the pool (queued or running). */
        final AtomicBoolean scheduled = new AtomicBoolean();

        Applier(String from) {
            this.from = from;
        }

        /** Puts a turn of this sender on the pool unless one is there already. */
        void schedule() {
            if (scheduled.compareAndSet(false, true)) {
                try {
                    pool.execute(this::turn);
                } catch (RejectedExecutionException e) {
                    scheduled.set(false);
                    Runnable task;
                    while ((task = queue.poll()) != null) {
                        task.run(); // shutting down: apply here rather than lose it (close waits for this)
                    }
                }
            }
        }

        /** Applies up to {@value #TURN} batches, then lets other senders' turns go first. */
        void turn() {
            for (int i = 0; i < TURN; i++) {
                Runnable task = queue.poll();
                if (task == null) {
                    break;
                }
                task.run();
            }
            scheduled.set(false);
            if (!queue.isEmpty()) {
                schedule();
            }
        }

        /** Applies on the calling thread when nothing of this sender is pending (one hand-off less). */
        boolean tryApplyInline(ByteBuffer batch) throws RpcException {
            if (pending.get() != 0 || !applying.tryLock()) {
                return false;
            }
            try {
                if (pending.get() != 0) {
                    return false;
                }
                try {
                    inbound.onEvents(from, batch.duplicate());
                } catch (MalformedFrameException e) {
                    throw new RpcException("ehrelay: batch rejected: " + e.getMessage());
                }
                return true;
            } finally {
                applying.unlock();
            }
        }

        /** Queues the batch; from the moment it returns, the task runs {@code done} (not when it throws). */
        Future<?> submit(ByteBuffer batch, boolean waited, Runnable done) throws RpcException {
            int permits = Math.min(batch.remaining(), POSTED_MAX_BYTES);
            // the node's bound counts a batch in full (up to all of it): queued batches hold at most
            // NODE_POSTED_MAX_BYTES, or one batch when a single one is larger
            int nodePermits = Math.min(batch.remaining(), NODE_POSTED_MAX_BYTES);
            long deadline = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(postTimeoutMillis);
            try {
                if (!room.tryAcquire(permits, postTimeoutMillis, TimeUnit.MILLISECONDS)) {
                    throw new RpcException("ehrelay: receiver still applying earlier batches from " + from
                            + " after " + postTimeoutMillis + " ms");
                }
                if (!nodeRoom.tryAcquire(nodePermits, Math.max(0, deadline - clock.nanoTime()),
                        TimeUnit.NANOSECONDS)) {
                    room.release(permits);
                    throw new RpcException("ehrelay: receiver still applying earlier batches of all its senders "
                            + "(" + (NODE_POSTED_MAX_BYTES >> 20) + " MB) after " + postTimeoutMillis + " ms");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RpcException("ehrelay: interrupted");
            }
            if (closed) {
                nodeRoom.release(nodePermits);
                room.release(permits);
                throw new RpcException("ehrelay: node is shutting down");
            }
            pending.incrementAndGet();
            uses.incrementAndGet(); // the batch keeps this sender's place until it is applied
            FutureTask<Void> task = new FutureTask<>(() -> {
                applying.lock();
                try {
                    inbound.onEvents(from, batch.duplicate());
                } catch (MalformedFrameException e) {
                    if (waited) {
                        throw e;
                    }
                    // counted and logged by provider-api
                } finally {
                    applying.unlock();
                    pending.decrementAndGet();
                    nodeRoom.release(nodePermits);
                    room.release(permits);
                    release(this);
                    done.run();
                }
                return null;
            });
            queue.add(task);
            schedule();
            return task;
        }
    }

    private static final class Transfer {
        final InboundHandler.StateCursor cursor;
        volatile long lastUsed;

        Transfer(InboundHandler.StateCursor cursor, long now) {
            this.cursor = cursor;
            this.lastUsed = now;
        }
    }
}
