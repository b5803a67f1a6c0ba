package io.ehrelay.spi;

import java.nio.ByteBuffer;

import net.sf.ehcache.Ehcache;

/**
 * What a transport calls when bytes arrive from a peer. Implemented by provider-api; thread-safe: transports
 * may call it from any number of threads, but must call it from one thread at a time per connection to keep
 * per-cache order.
 */
public interface InboundHandler {

    /**
     * Decodes and applies the event batch between {@code batch}'s position and limit (heap or direct memory;
     * it is not kept). Returns after every event was applied (or counted as rejected), so a transport can
     * acknowledge afterwards and reuse the buffer.
     *
     * @throws MalformedFrameException when the batch is damaged; nothing from it was applied
     */
    void onEvents(String fromPeer, ByteBuffer batch) throws MalformedFrameException;

    /**
     * Streams a cache's current content as event batches of at most about {@code maxChunkBytes} each, for
     * transports that push a whole transfer at once (the others page through {@link #openState}).
     *
     * @throws IllegalArgumentException when this node has no such cache
     * @throws Exception                whatever {@code sink} throws (e.g. the requesting peer went away)
     */
    default void onStateRequest(String cacheName, int maxChunkBytes, ChunkSink sink) throws Exception {
        StateCursor cursor = openState(cacheName);
        for (byte[] chunk = cursor.next(maxChunkBytes); chunk != null; chunk = cursor.next(maxChunkBytes)) {
            sink.accept(chunk);
        }
    }

    /**
     * Applies one already-decoded event, counted like the events of a batch; for transports that receive
     * events in another form (e.g. Ehcache's own RMI messages from a stock node). An event for a cache this
     * node does not have is counted in {@code unknownCache} and dropped.
     */
    void onEvent(String fromPeer, ReplicationEvent event);

    /**
     * An event for {@code cacheName} that the transport had to refuse before it could be decoded (e.g. the JVM's
     * serialization filter refused a class in the arguments of an RMI call): this node no longer knows which
     * entry it would have changed, so it removes every element of that cache locally (not replicated), counts it
     * in {@code invalidated} and {@code rejected}, and logs why. Nothing for a cache this node does not have.
     *
     * @param rejectedClass the class refused, or {@code null} when a limit or damage was the reason
     */
    void onUndecodable(String fromPeer, String cacheName, String rejectedClass, String why);

    /**
     * A live cache of this node by name (including one still bootstrapping), or {@code null}; for transports
     * that must answer reads of another protocol (e.g. a stock RMI peer's {@code getKeys}).
     */
    Ehcache liveCache(String cacheName);

    /**
     * Opens a paged state transfer: the cache's keys are taken now, elements are read as each chunk is built.
     *
     * @throws IllegalArgumentException when this node has no such cache
     */
    StateCursor openState(String cacheName);

    /** A state transfer in progress. Not thread-safe: one reader at a time. */
    interface StateCursor {
        /** The next chunk (an event batch of PUT events of about {@code maxChunkBytes}), or {@code null} at the end. */
        byte[] next(int maxChunkBytes);
    }

    /** Receives the chunks of a state transfer in order. */
    @FunctionalInterface
    interface ChunkSink {
        void accept(byte[] chunk) throws Exception;
    }
}
