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

    private final InboundHandler inbound;
    private final int maxFrameBytes;
    private final Map<Long, Transfer> transfers = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong(System.nanoTime() & 0xffffffffL);

    RelayEndpoint(InboundHandler inbound, int maxFrameBytes) {
        this.inbound = inbound;
        this.maxFrameBytes = maxFrameBytes;
    }

    @Override
    public void deliver(String fromEndpoint, byte[] batch) throws RemoteException {
        if (batch == null) {
            throw new RemoteException("no batch");
        }
        try {
            inbound.onEvents(fromEndpoint, ByteBuffer.wrap(batch));
        } catch (MalformedFrameException e) {
            // counted and logged by provider-api; the caller learns why
            throw new RemoteException("ehrelay: batch rejected: " + e.getMessage());
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
