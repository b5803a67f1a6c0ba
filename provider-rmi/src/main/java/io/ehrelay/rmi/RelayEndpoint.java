package io.ehrelay.rmi;

import java.nio.ByteBuffer;
import java.rmi.RemoteException;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.codec.MalformedFrameException;
import io.ehrelay.spi.InboundHandler;

/**
 * The server side of {@link RelayRemote}: hands batches to provider-api and serves paged state transfers. At
 * most {@value #MAX_TRANSFERS} transfers are open at once; one idle for {@value #TRANSFER_IDLE_SECONDS} s is
 * dropped (the requester then fails and tries another peer). Thread-safe.
 */
final class RelayEndpoint implements RelayRemote {

    static final int MAX_TRANSFERS = 32;
    static final int TRANSFER_IDLE_SECONDS = 120;
    /** Bytes of posted batches a receiver holds per sender before the next post waits. */
    static final int POSTED_MAX_BYTES = 4 << 20;

    private final InboundHandler inbound;
    private final int maxFrameBytes;
    private final java.util.concurrent.ThreadFactory applyThreads;
    private final long postTimeoutMillis;
    private final Map<String, Applier> appliers = new ConcurrentHashMap<>();
    private volatile boolean closed;
    private final Map<Long, Transfer> transfers = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong(System.nanoTime() & 0xffffffffL);

    RelayEndpoint(InboundHandler inbound, int maxFrameBytes, java.util.concurrent.ThreadFactory applyThreads,
                  long postTimeoutMillis) {
        this.inbound = inbound;
        this.maxFrameBytes = maxFrameBytes;
        this.applyThreads = applyThreads;
        this.postTimeoutMillis = postTimeoutMillis;
    }

    @Override
    public void deliver(String fromEndpoint, byte[] batch) throws RemoteException {
        if (batch == null) {
            throw new RemoteException("no batch");
        }
        // behind whatever this sender posted before, so that per-cache order holds
        java.util.concurrent.Future<?> applied = applier(fromEndpoint).submit(batch, true);
        try {
            applied.get();
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof MalformedFrameException) {
                // counted and logged by provider-api; the caller learns why
                throw new RemoteException("ehrelay: batch rejected: " + cause.getMessage());
            }
            throw new RemoteException("ehrelay: batch not applied: " + cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RemoteException("ehrelay: interrupted");
        }
    }

    @Override
    public void post(String fromEndpoint, byte[] batch) throws RemoteException {
        if (batch == null) {
            throw new RemoteException("no batch");
        }
        applier(fromEndpoint).submit(batch, false);
    }

    private Applier applier(String from) throws RemoteException {
        if (closed) {
            throw new RemoteException("ehrelay: node is shutting down");
        }
        return appliers.computeIfAbsent(from == null ? "?" : from, Applier::new);
    }

    /** Stops the apply threads; what they still hold is applied first, up to {@code waitMillis}. */
    void close(long waitMillis) {
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
    }

    /**
     * Applies one sender's batches in arrival order on one thread (ends when idle), holding at most
     * {@value #POSTED_MAX_BYTES} bytes of not-yet-applied batches (a larger batch waits until it is alone); a
     * post waits for room up to the post timeout, so a slow receiver slows its senders down.
     */
    private final class Applier {
        final String from;
        final java.util.concurrent.ThreadPoolExecutor executor;
        final java.util.concurrent.Semaphore room;
        final int capacity;

        Applier(String from) {
            this.from = from;
            this.capacity = POSTED_MAX_BYTES;
            this.room = new java.util.concurrent.Semaphore(capacity);
            this.executor = new java.util.concurrent.ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS,
                    new java.util.concurrent.LinkedBlockingQueue<>(), applyThreads);
            this.executor.allowCoreThreadTimeOut(true);
        }

        java.util.concurrent.Future<?> submit(byte[] batch, boolean waited) throws RemoteException {
            int permits = Math.min(batch.length, capacity);
            try {
                if (!room.tryAcquire(permits, postTimeoutMillis, TimeUnit.MILLISECONDS)) {
                    throw new RemoteException("ehrelay: receiver still applying earlier batches from " + from
                            + " after " + postTimeoutMillis + " ms");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new RemoteException("ehrelay: interrupted");
            }
            try {
                return executor.submit(() -> {
                    try {
                        inbound.onEvents(from, ByteBuffer.wrap(batch));
                    } catch (MalformedFrameException e) {
                        if (waited) {
                            throw e;
                        }
                        // counted and logged by provider-api
                    } finally {
                        room.release(permits);
                    }
                    return null;
                });
            } catch (java.util.concurrent.RejectedExecutionException e) {
                room.release(permits);
                throw new RemoteException("ehrelay: node is shutting down");
            }
        }
    }

    @Override
    public long openState(String cacheName) throws RemoteException {
        expireIdle();
        if (transfers.size() >= MAX_TRANSFERS) {
            throw new RemoteException("ehrelay: " + MAX_TRANSFERS + " state transfers already open; retry later");
        }
        InboundHandler.StateCursor cursor;
        try {
            cursor = inbound.openState(cacheName);
        } catch (IllegalArgumentException e) {
            throw new RemoteException("ehrelay: " + e.getMessage());
        }
        long id = ids.incrementAndGet();
        transfers.put(id, new Transfer(cursor));
        return id;
    }

    @Override
    public byte[] nextState(long transferId, int maxChunkBytes) throws RemoteException {
        Transfer t = transfers.get(transferId);
        if (t == null) {
            throw new RemoteException("ehrelay: no open state transfer " + transferId + " (expired or finished)");
        }
        synchronized (t) {
            t.lastUsed = System.nanoTime();
            byte[] chunk = t.cursor.next(Math.max(1, Math.min(maxChunkBytes, maxFrameBytes / 2)));
            if (chunk == null) {
                transfers.remove(transferId);
            }
            return chunk;
        }
    }

    private void expireIdle() {
        long cutoff = System.nanoTime() - TimeUnit.SECONDS.toNanos(TRANSFER_IDLE_SECONDS);
        for (Iterator<Transfer> it = transfers.values().iterator(); it.hasNext(); ) {
            if (it.next().lastUsed - cutoff < 0) {
                it.remove();
            }
        }
    }

    int openTransfers() {
        return transfers.size();
    }

    private static final class Transfer {
        final InboundHandler.StateCursor cursor;
        volatile long lastUsed = System.nanoTime();

        Transfer(InboundHandler.StateCursor cursor) {
            this.cursor = cursor;
        }
    }
}
