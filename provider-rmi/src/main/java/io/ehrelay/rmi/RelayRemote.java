package io.ehrelay.rmi;

import java.rmi.Remote;
import java.rmi.RemoteException;

/**
 * The remote object two ehrelay RMI nodes talk through: batches and paged state transfer in the codec's format,
 * as byte arrays and {@link RelayBatch}es (all its export filter lets in; names as UTF-8 arrays, which the filter
 * bounds). A peer without this binding is a stock node. With a cluster secret, a caller opens a session first
 * ({@link #challenge}, {@link #authenticate}) and names it in every call. The calls and sessions:
 * docs/wire-format.md, "Sessions of RMI and Hessian calls".
 */
public interface RelayRemote extends Remote {

    /**
     * The registry name of the relay; versioned so that a future protocol can live next to this one (v2 added
     * sessions, v3 carried batches as {@link RelayBatch}: a node of an older version finds no binding of its own
     * version and talks to this node as to a stock one).
     */
    String BINDING = "ehrelay.relay.v3";

    /** A challenge to open a session with; fails when this node has no cluster secret. */
    byte[] challenge() throws RemoteException;

    /** Opens a session: the answer to {@link #challenge} (see {@link io.ehrelay.internal.rpc.RpcSessions#authenticate}). */
    byte[] authenticate(byte[] fromEndpoint, byte[] challenge, byte[] response) throws RemoteException;

    /** Tells this node the caller is up (so it ends its backoff towards the caller at once). */
    void hello(byte[] fromEndpoint, byte[] session) throws RemoteException;

    /**
     * Applies an event batch; returns after every event was applied (or counted as rejected). The sender is the
     * batch's, checked against its session when the node has a cluster secret.
     */
    void deliver(RelayBatch batch) throws RemoteException;

    /**
     * Queues an event batch for applying, in order with everything else from its sender; returns once
     * it is queued (the asynchronous path: the next batch travels while this one is applied). Blocks while the
     * receiver's bound for that sender is full, and fails if that lasts too long.
     */
    void post(RelayBatch batch) throws RemoteException;

    /** Opens a state transfer of a cache; the id names it in {@link #nextState}. */
    long openState(byte[] session, byte[] cacheName) throws RemoteException;

    /** The next chunk of a state transfer (a batch of puts), or {@code null} when it is complete. */
    byte[] nextState(byte[] session, long transferId, int maxChunkBytes) throws RemoteException;
}
