package io.ehrelay.spi.rpc;

import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;

/**
 * The receiving side of the relay protocol. Batches from one sender are applied in arrival order: posted ones
 * on that sender's apply thread (which ends when idle), holding at most {@value #POSTED_MAX_BYTES} bytes not yet
 * applied (a post waits for room up to the post timeout, so a slow receiver slows its senders down); a
 * delivered one on the calling thread when nothing of that sender is pending, else behind what is. At most
 * {@value #MAX_TRANSFERS} state transfers are open at once; one idle for {@value #TRANSFER_IDLE_SECONDS} s is
 * dropped (the requester then fails and tries another peer). Thread-safe.
 */
public final class RpcService {

    public static final int MAX_TRANSFERS = 32;
    public static final int TRANSFER_IDLE_SECONDS = 120;
    /** Bytes of posted batches a receiver holds per sender before the next post waits. */
    public static final int POSTED_MAX_BYTES = 4 << 20;

    private final InboundHandler inbound;
    private final int maxFrameBytes;
    private final ThreadFactory applyThreads;
    private final long postTimeoutMillis;
    private final java.util.function.Consumer<String> onHello;
    private final Clock clock;
    private final Map<String, Applier> appliers = new ConcurrentHashMap<>();
    private final Map<Long, Transfer> transfers = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong(System.nanoTime() & 0xffffffffL);
    private volatile boolean closed;

    /**
     * @param postTimeoutMillis how long a post waits for room; keep it below the callers' read timeout, so that
     *                          they hear why it failed
     * @param onHello called with a peer's endpoint when it says it is up (e.g. to end a backoff towards it)
     * @param clock   the node's time source, for expiring idle state transfers ({@link Clock#SYSTEM} in production)
     */
    public RpcService(InboundHandler inbound, int maxFrameBytes, ThreadFactory applyThreads,
                        long postTimeoutMillis, java.util.function.Consumer<String> onHello, Clock clock) {
        this.onHello = onHello;
        this.clock = clock;
        this.inbound = inbound;
        this.maxFrameBytes = maxFrameBytes;
        this.applyThreads = applyThreads;
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
        Applier a = applier(fromEndpoint);
        if (a.tryApplyInline(batch)) {
            return;
        }
        Future<?> applied = a.submit(batch, true);
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
        applier(fromEndpoint).submit(batch, false);
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

    private Applier applier(String from) throws RpcException {
        if (closed) {
            throw new RpcException("ehrelay: node is shutting down");
        }
        return appliers.computeIfAbsent(from == null ? "?" : from, Applier::new);
    }

    /** Stops the apply threads; what they still hold is applied first, up to {@code waitMillis}. */
    public void close(long waitMillis) {
        closed = true;
        for (Applier a : appliers.values()) {
            a.executor.shutdown();
        }
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        for (Applier a : appliers.values()) {
            try {
                if (!a.executor.awaitTermination(Math.max(0, until - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    a.executor.shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                a.executor.shutdownNow();
            }
        }
        transfers.clear();
    }

    /** One sender's batches, applied in order. */
    private final class Applier {
        final String from;
        final ThreadPoolExecutor executor;
        final Semaphore room = new Semaphore(POSTED_MAX_BYTES);
        final AtomicInteger pending = new AtomicInteger();
        final ReentrantLock applying = new ReentrantLock();

        Applier(String from) {
            this.from = from;
            this.executor = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                    applyThreads);
            this.executor.allowCoreThreadTimeOut(true);
        }

        /** Applies on the calling thread when nothing of this sender is pending (one hand-off less). */
        boolean tryApplyInline(byte[] batch) throws RpcException {
            if (pending.get() != 0 || !applying.tryLock()) {
                return false;
            }
            try {
                if (pending.get() != 0) {
                    return false;
                }
                try {
                    inbound.onEvents(from, ByteBuffer.wrap(batch));
                } catch (MalformedFrameException e) {
                    throw new RpcException("ehrelay: batch rejected: " + e.getMessage());
                }
                return true;
            } finally {
                applying.unlock();
            }
        }

        Future<?> submit(byte[] batch, boolean waited) throws RpcException {
            int permits = Math.min(batch.length, POSTED_MAX_BYTES);
            try {
                if (!room.tryAcquire(permits, postTimeoutMillis, TimeUnit.MILLISECONDS)) {
                    throw new RpcException("ehrelay: receiver still applying earlier batches from " + from
                            + " after " + postTimeoutMillis + " ms");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RpcException("ehrelay: interrupted");
            }
            pending.incrementAndGet();
            try {
                return executor.submit(() -> {
                    applying.lock();
                    try {
                        inbound.onEvents(from, ByteBuffer.wrap(batch));
                    } catch (MalformedFrameException e) {
                        if (waited) {
                            throw e;
                        }
                        // counted and logged by provider-api
                    } finally {
                        applying.unlock();
                        pending.decrementAndGet();
                        room.release(permits);
                    }
                    return null;
                });
            } catch (RejectedExecutionException e) {
                pending.decrementAndGet();
                room.release(permits);
                throw new RpcException("ehrelay: node is shutting down");
            }
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
