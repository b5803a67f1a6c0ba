package io.ehrelay.rmi;

import java.rmi.RemoteException;

import io.ehrelay.relay.RelayException;
import io.ehrelay.relay.RelayService;

/** The RMI face of provider-api's {@link RelayService}: its refusals become {@link RemoteException}s. */
final class RelayEndpoint implements RelayRemote {

    private final RelayService service;

    RelayEndpoint(RelayService service) {
        this.service = service;
    }

    @Override
    public void hello(String fromEndpoint) throws RemoteException {
        try {
            service.hello(fromEndpoint);
        } catch (RelayException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public void deliver(String fromEndpoint, byte[] batch) throws RemoteException {
        try {
            service.deliver(fromEndpoint, batch);
        } catch (RelayException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public void post(String fromEndpoint, byte[] batch) throws RemoteException {
        try {
            service.post(fromEndpoint, batch);
        } catch (RelayException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public long openState(String cacheName) throws RemoteException {
        try {
            return service.openState(cacheName);
        } catch (RelayException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public byte[] nextState(long transferId, int maxChunkBytes) throws RemoteException {
        try {
            return service.nextState(transferId, maxChunkBytes);
        } catch (RelayException e) {
            throw new RemoteException(e.getMessage());
        }
    }
}
