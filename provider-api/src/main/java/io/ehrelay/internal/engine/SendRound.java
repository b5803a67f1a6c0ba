package io.ehrelay.internal.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.ehrelay.internal.Futures;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;

/**
 * One batch sent to a set of peers, and the wait for each peer's outcome: the one send-and-settle of the
 * engine, used by the dispatcher (asynchronous replication, each peer given {@code sendTimeoutMillis}) and by
 * synchronous replication (all peers share the put's deadline). A transport that throws instead of failing its
 * future counts as a failed send. Not thread-safe: one thread starts and settles a round.
 */
final class SendRound {

    /** What happened to one peer's send. */
    interface Outcome {
        /** @param failure why the peer did not take the batch, or {@code null} when it did */
        void settled(Peer peer, Throwable failure) throws InterruptedException;
    }

    /** How long to wait for the next peer, in milliseconds (at least 1). */
    interface Patience {
        long nextWaitMillis();
    }

    private final List<Peer> targets;
    private final List<CompletableFuture<Void>> futures;

    private SendRound(List<Peer> targets, List<CompletableFuture<Void>> futures) {
        this.targets = targets;
        this.futures = futures;
    }

    /** Hands {@code batch} to the transport for every target. */
    static SendRound start(Transport transport, List<Peer> targets, Batch batch, boolean acknowledge) {
        return start(transport, targets, Collections.nCopies(targets.size(), batch), acknowledge);
    }

    /** Hands each target its own batch ({@code batches.get(i)} to {@code targets.get(i)}). */
    static SendRound start(Transport transport, List<Peer> targets, List<Batch> batches, boolean acknowledge) {
        List<CompletableFuture<Void>> futures = new ArrayList<>(targets.size());
        for (int i = 0; i < targets.size(); i++) {
            Peer p = targets.get(i);
            CompletableFuture<Void> f;
            try {
                f = transport.send(p, batches.get(i), acknowledge);
            } catch (RuntimeException e) {
                f = Futures.failed(e);
            }
            futures.add(f);
        }
        return new SendRound(targets, futures);
    }

    List<Peer> targets() {
        return targets;
    }

    /** Waits for each peer in turn, as long as {@code patience} says, and reports each outcome in order. */
    void settle(Patience patience, Outcome outcome) throws InterruptedException {
        for (int i = 0; i < targets.size(); i++) {
            outcome.settled(targets.get(i), await(futures.get(i), Math.max(1, patience.nextWaitMillis())));
        }
    }

    /** Waits for a future; returns its failure ({@link TimeoutException} after the wait), or {@code null}. */
    static Throwable await(CompletableFuture<Void> f, long timeoutMillis) throws InterruptedException {
        try {
            f.get(timeoutMillis, TimeUnit.MILLISECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause() == null ? e : e.getCause();
        } catch (CancellationException e) {
            return e;
        } catch (TimeoutException e) {
            f.cancel(false);
            return new TimeoutException("no answer within " + timeoutMillis + " ms");
        }
    }

    /** A failure in one line, for logs and exception messages. */
    static String describe(Throwable t) {
        String m = t.getMessage();
        return m == null ? t.getClass().getSimpleName() : t.getClass().getSimpleName() + ": " + m;
    }
}
