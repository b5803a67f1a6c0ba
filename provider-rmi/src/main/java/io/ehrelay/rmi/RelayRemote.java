package io.ehrelay.rmi;

import java.rmi.Remote;
import java.rmi.RemoteException;

/**
 * The remote object through which two ehrelay RMI nodes talk: event batches and paged state transfer in the
 * provider-api codec's format, as byte arrays (the only objects its export filter lets in). A node that finds
 * this binding in a peer's registry uses it; otherwise the peer is a stock node and gets Ehcache's messages.
 */
public interface RelayRemote extends Remote, io.ehrelay.spi.rpc.RpcCalls {

    /** The registry name of the relay; versioned so that a future protocol can live next to this one. */
    String BINDING = "ehrelay.relay.v1";

    /** Applies an event batch; returns after every event was applied (or counted as rejected). */
    @Override
    void hello(String fromEndpoint) throws RemoteException;

    @Override
    void deliver(String fromEndpoint, byte[] batch) throws RemoteException;

    /**
     * Queues an event batch for applying, in order with everything else from {@code fromEndpoint}; returns once
     * it is queued (the asynchronous path: the next batch travels while this one is applied). Blocks while the
     * receiver's bound for that sender is full, and fails if that lasts too long.
     */
    @Override
    void post(String fromEndpoint, byte[] batch) throws RemoteException;

    /** Opens a state transfer of a cache; the id names it in {@link #nextState}. */
    @Override
    long openState(String cacheName) throws RemoteException;

    /** The next chunk of a state transfer (a batch of puts), or {@code null} when it is complete. */
    @Override
    byte[] nextState(long transferId, int maxChunkBytes) throws RemoteException;
}
