package io.ehrelay.tcp;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Peer;

/**
 * What a {@link TcpPeerChannel} waits for from its peer, by correlation id: the acknowledgement of a batch sent
 * with {@code EVENTS_ACK}, and the chunks of a state transfer; {@link #accept} matches each frame the peer sends
 * back to its request. Thread-safe.
 */
final class PeerAnswers {

    private final Peer peer;
    private final Map<Long, CompletableFuture<Void>> awaiting = new ConcurrentHashMap<>();
    private final Map<Long, Transfer> transfers = new ConcurrentHashMap<>();

    PeerAnswers(Peer peer) {
        this.peer = peer;
    }

    /** A state transfer in progress. */
    private static final class Transfer {
        final InboundHandler.ChunkSink sink;
        final CompletableFuture<Void> future;

        Transfer(InboundHandler.ChunkSink sink, CompletableFuture<Void> future) {
            this.sink = sink;
            this.future = future;
        }
    }

    /** {@code f} completes when the peer acknowledges the frame numbered {@code corr} (or refuses it). */
    void awaitAck(long corr, CompletableFuture<Void> f) {
        awaiting.put(corr, f);
        f.whenComplete((v, t) -> awaiting.remove(corr));
    }

    /** The chunks of the transfer numbered {@code corr} go to {@code sink}; {@code f} completes at its end. */
    void awaitState(long corr, InboundHandler.ChunkSink sink, CompletableFuture<Void> f) {
        transfers.put(corr, new Transfer(sink, f));
        f.whenComplete((v, t) -> transfers.remove(corr));
    }

    /**
     * A frame the peer sent back.
     *
     * @throws MalformedFrameException for a frame a peer never sends back (the connection is closed)
     */
    void accept(FrameChannel.Frame f) throws MalformedFrameException {
        long corr = f.header.correlationId();
        switch (f.header.type()) {
            case ACK: {
                CompletableFuture<Void> done = awaiting.get(corr);
                if (done != null) {
                    done.complete(null);
                }
                break;
            }
            case NACK: {
                String reason = new String(f.copy(), StandardCharsets.UTF_8);
                Exception e = new IOException("peer " + peer + " refused: " + reason);
                CompletableFuture<Void> done = awaiting.get(corr);
                if (done != null) {
                    done.completeExceptionally(e);
                }
                Transfer t = transfers.get(corr);
                if (t != null) {
                    t.future.completeExceptionally(e);
                }
                break;
            }
            case STATE_CHUNK: {
                Transfer t = transfers.get(corr);
                if (t != null && !t.future.isDone()) {
                    try {
                        t.sink.accept(f.copy());
                    } catch (Exception e) {
                        t.future.completeExceptionally(e);
                    }
                }
                break;
            }
            case STATE_END: {
                Transfer t = transfers.get(corr);
                if (t != null) {
                    t.future.complete(null);
                }
                break;
            }
            case CHALLENGE:
                throw new MalformedFrameException("peer " + peer + " requires the cluster secret, which this "
                        + "node does not have: set the same clusterSecret on every node");
            default:
                throw new MalformedFrameException("unexpected " + f.header.type() + " frame from " + peer);
        }
    }

    /** Everything still waited for fails with {@code cause} (the connection was lost, or the channel closed). */
    void failAll(Throwable cause) {
        awaiting.values().forEach(f -> f.completeExceptionally(cause));
        transfers.values().forEach(t -> t.future.completeExceptionally(cause));
    }
}
