package io.ehrelay.internal.engine;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.spi.Batch;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import io.ehrelay.spi.TransportContext;

/** A transport for engine tests: records every send (peer, bytes, event count) and fails the ones it is told to. */
final class RecordingTransport implements Transport {

    final List<String> sentTo = new CopyOnWriteArrayList<>();
    final List<byte[]> sentBytes = new CopyOnWriteArrayList<>();
    final List<Integer> sentEventCounts = new CopyOnWriteArrayList<>();
    /** Each send's batch as pieces, while {@link #byReference} is set. */
    final List<Batch.Pieces> sentPieces = new CopyOnWriteArrayList<>();
    /** Asks the dispatcher to name large values by reference (read when it starts). */
    volatile boolean byReference;
    /** Asks the dispatcher for batches on the heap (read when it starts). */
    volatile boolean onHeap;
    /** For each send, the arrays {@link Batch#writeTo} handed a stream, while {@link #onHeap} is set. */
    final List<List<byte[]>> writtenArrays = new CopyOnWriteArrayList<>();
    /** Every send fails while set. */
    volatile boolean failing;
    private final AtomicInteger failNext = new AtomicInteger();
    /** The next send throws this (as a transport with a bug, or a JVM out of memory, would), or nothing. */
    volatile Error throwNext;
    /** When positive, a send is answered this many milliseconds later, on another thread (a loaded peer). */
    volatile long answerAfterMillis;

    /** The next {@code n} sends fail. */
    RecordingTransport failNext(int n) {
        failNext.set(n);
        return this;
    }

    @Override
    public CompletableFuture<Void> send(Peer peer, Batch batch, boolean acknowledge) {
        Error thrown = throwNext;
        if (thrown != null) {
            throwNext = null;
            throw thrown;
        }
        sentTo.add(peer.endpoint());
        sentBytes.add(batch.toByteArray().clone());
        sentEventCounts.add(batch.eventCount());
        if (byReference) {
            sentPieces.add(batch.pieces());
        }
        if (onHeap) {
            List<byte[]> arrays = new ArrayList<>();
            try {
                batch.writeTo(new OutputStream() {
                    @Override
                    public void write(int b) {
                        throw new AssertionError("written in bulk");
                    }

                    @Override
                    public void write(byte[] b, int off, int len) {
                        arrays.add(b);
                    }
                }, new byte[256]);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            writtenArrays.add(arrays);
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        if (failing || failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            f.completeExceptionally(new IOException("connection reset"));
        } else if (answerAfterMillis > 0) {
            CompletableFuture.delayedExecutor(answerAfterMillis, TimeUnit.MILLISECONDS).execute(() -> f.complete(null));
        } else {
            f.complete(null);
        }
        return f;
    }

    @Override public boolean sendsValuesByReference() { return byReference; }
    @Override public boolean encodesOnHeap() { return onHeap; }
    @Override public void start(TransportContext context) { }
    @Override public String localEndpoint() { return "self:0"; }
    @Override public CompletableFuture<Void> requestState(Peer p, String c, int m, InboundHandler.ChunkSink s) {
        return new CompletableFuture<>();
    }
    @Override public boolean isReachable(Peer p) { return true; }
    @Override public void stop() { }
}
