package io.ehrelay.spi;

import io.ehrelay.codec.MalformedFrameException;

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
    void onEvents(String fromPeer, java.nio.ByteBuffer batch) throws MalformedFrameException;

    /**
     * Streams a cache's current content as event batches of at most about {@code maxChunkBytes} each.
     *
     * @throws IllegalArgumentException when this node has no such cache
     * @throws Exception                whatever {@code sink} throws (e.g. the requesting peer went away)
     */
    void onStateRequest(String cacheName, int maxChunkBytes, ChunkSink sink) throws Exception;

    /** Receives the chunks of a state transfer in order. */
    @FunctionalInterface
    interface ChunkSink {
        void accept(byte[] chunk) throws Exception;
    }
}
