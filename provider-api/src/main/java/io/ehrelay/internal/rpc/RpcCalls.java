package io.ehrelay.internal.rpc;

import java.io.IOException;

/** A peer's relay as the sending side sees it: the four calls of the protocol, over some transport. */
public interface RpcCalls {

    /** Tells the peer this node is up (so it ends its backoff towards this node at once). */
    void hello(String fromEndpoint) throws IOException;

    /** Applies a batch on the peer; returns after every event was applied (or counted as rejected). */
    void deliver(String fromEndpoint, byte[] batch) throws IOException;

    /** Queues a batch on the peer, applied in order with everything else from this node. */
    void post(String fromEndpoint, byte[] batch) throws IOException;

    /** Opens a state transfer of a cache on the peer. */
    long openState(String cacheName) throws IOException;

    /** The next chunk of a state transfer, or {@code null} when it is complete. */
    byte[] nextState(long transferId, int maxChunkBytes) throws IOException;
}
