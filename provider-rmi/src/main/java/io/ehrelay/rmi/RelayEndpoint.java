package io.ehrelay.rmi;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.rmi.AccessException;
import java.rmi.RemoteException;
import java.rmi.server.RemoteServer;
import java.rmi.server.ServerNotActiveException;

import io.ehrelay.internal.rpc.RpcException;
import io.ehrelay.internal.rpc.RpcService;
import io.ehrelay.internal.rpc.RpcSessions;

/**
 * The RMI face of provider-api's {@link RpcService}: checks each call's session when the node has a cluster
 * secret ({@link RpcSessions}; the sender is then the name its session was opened under, whatever the call
 * claims), and turns refusals into {@link RemoteException}s.
 */
final class RelayEndpoint implements RelayRemote {

    private final RpcService service;
    private final RpcSessions sessions;

    /** @param sessions the node's sessions, or {@code null} when it has no cluster secret */
    RelayEndpoint(RpcService service, RpcSessions sessions) {
        this.service = service;
        this.sessions = sessions;
    }

    /** The sender of a call: checked against its session when there are sessions. */
    private String sender(String claimed, byte[] session) throws AccessException {
        return sender(sessions, claimed, session);
    }

    /**
     * The sender of a call to a relay with {@code sessions} (or none: then as claimed), on the thread RMI runs
     * the call on (also while a {@link RelayBatch} of the call is read).
     */
    static String sender(RpcSessions sessions, String claimed, byte[] session) throws AccessException {
        if (sessions == null) {
            return claimed;
        }
        try {
            return sessions.check(session, callerHost());
        } catch (RpcException e) {
            throw new AccessException(e.getMessage());
        }
    }

    private static InetAddress callerHost() throws AccessException {
        try {
            return InetAddress.getByName(RemoteServer.getClientHost());
        } catch (ServerNotActiveException | UnknownHostException e) {
            throw new AccessException(RpcSessions.UNAUTHORIZED + "caller unknown (" + e.getMessage() + ")");
        }
    }

    @Override
    public byte[] challenge() throws RemoteException {
        if (sessions == null) {
            throw new RemoteException("ehrelay: this node has no clusterSecret");
        }
        return sessions.challenge();
    }

    @Override
    public byte[] authenticate(byte[] fromEndpoint, byte[] challenge, byte[] response) throws RemoteException {
        if (sessions == null) {
            throw new RemoteException("ehrelay: this node has no clusterSecret");
        }
        try {
            return sessions.authenticate(RelayBatch.name(fromEndpoint), callerHost(), challenge, response);
        } catch (RpcException e) {
            throw new AccessException(e.getMessage());
        }
    }

    @Override
    public void hello(byte[] fromEndpoint, byte[] session) throws RemoteException {
        String from = sender(RelayBatch.name(fromEndpoint), session);
        try {
            service.hello(from);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public void deliver(RelayBatch batch) throws RemoteException {
        batch.claim();
        try {
            service.deliver(received(batch), batch.data(), batch::recycle);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        } finally {
            batch.release();
        }
    }

    @Override
    public void post(RelayBatch batch) throws RemoteException {
        batch.claim();
        try {
            service.post(received(batch), batch.data(), batch::recycle);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        } finally {
            batch.release(); // queued: the apply queue's bounds hold it from here
        }
    }

    /** The sender of a batch this node's relay read (and checked: {@link RelayBatch#readObject}). */
    private static String received(RelayBatch batch) throws RemoteException {
        if (batch == null || !batch.received()) {
            throw new AccessException(RpcSessions.UNAUTHORIZED + "a batch that was not read by this node's relay");
        }
        return batch.sender();
    }

    @Override
    public long openState(byte[] session, byte[] cacheName) throws RemoteException {
        sender(null, session);
        try {
            return service.openState(RelayBatch.name(cacheName));
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public byte[] nextState(byte[] session, long transferId, int maxChunkBytes) throws RemoteException {
        sender(null, session);
        try {
            return service.nextState(transferId, maxChunkBytes);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        }
    }
}
