package io.ehrelay.rmi;

import java.rmi.RemoteException;

import io.ehrelay.spi.rpc.RpcException;
import io.ehrelay.spi.rpc.RpcService;

/** The RMI face of provider-api's {@link RpcService}: its refusals become {@link RemoteException}s. */
final class RelayEndpoint implements RelayRemote {

    private final RpcService service;

    RelayEndpoint(RpcService service) {
        this.service = service;
    }

    @Override
    public void hello(String fromEndpoint) throws RemoteException {
        try {
            service.hello(fromEndpoint);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public void deliver(String fromEndpoint, byte[] batch) throws RemoteException {
        try {
            service.deliver(fromEndpoint, batch);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public void post(String fromEndpoint, byte[] batch) throws RemoteException {
        try {
            service.post(fromEndpoint, batch);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public long openState(String cacheName) throws RemoteException {
        try {
            return service.openState(cacheName);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        }
    }

    @Override
    public byte[] nextState(long transferId, int maxChunkBytes) throws RemoteException {
        try {
            return service.nextState(transferId, maxChunkBytes);
        } catch (RpcException e) {
            throw new RemoteException(e.getMessage());
        }
    }
}
