package io.ehrelay.provider;

import java.io.Serializable;
import java.rmi.RemoteException;
import java.util.List;

import io.ehrelay.spi.LocalCachePeer;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;

/**
 * What {@code listRemoteCachePeers} returns for each reachable peer: Ehcache's {@link CachePeer} naming one cache
 * of one peer. The naming methods answer ({@code getName}, {@code getUrl}, {@code getUrlBase}, and
 * {@code getGuid}, which is the URL: ehrelay does not learn a peer CacheManager's GUID). The methods that move
 * data throw a {@link RemoteException} that says the ehrelay way: ehrelay replicates through its own transport,
 * so an application writes to its local cache and reads a peer's data on that peer. Immutable.
 */
final class RemoteCachePeer implements CachePeer {

    private final String cacheName;
    private final String urlBase;

    RemoteCachePeer(String cacheName, String endpoint) {
        this.cacheName = cacheName;
        this.urlBase = LocalCachePeer.urlBase(endpoint);
    }

    private RemoteException notHere(String method) {
        return new RemoteException("ehrelay: " + method + " on the CachePeer of cache '" + cacheName + "' at "
                + urlBase + " is not supported: ehrelay replicates through its own transport. Write to the local "
                + "cache (ehrelay replicates it) and read a peer's data on that peer; this CachePeer only names it");
    }

    @Override
    public void put(Element element) throws RemoteException {
        throw notHere("put");
    }

    @Override
    public boolean remove(Serializable key) throws RemoteException {
        throw notHere("remove");
    }

    @Override
    public void removeAll() throws RemoteException {
        throw notHere("removeAll");
    }

    @Override
    @SuppressWarnings("rawtypes")
    public void send(List eventMessages) throws RemoteException {
        throw notHere("send");
    }

    @Override
    public String getName() {
        return cacheName;
    }

    @Override
    public String getGuid() {
        return getUrl();
    }

    @Override
    public String getUrl() {
        return urlBase + "/" + cacheName;
    }

    @Override
    public String getUrlBase() {
        return urlBase;
    }

    @Override
    @SuppressWarnings("rawtypes")
    public List getKeys() throws RemoteException {
        throw notHere("getKeys");
    }

    @Override
    public Element getQuiet(Serializable key) throws RemoteException {
        throw notHere("getQuiet");
    }

    @Override
    @SuppressWarnings("rawtypes")
    public List getElements(List keys) throws RemoteException {
        throw notHere("getElements");
    }

    @Override
    public String toString() {
        return getUrl();
    }
}
