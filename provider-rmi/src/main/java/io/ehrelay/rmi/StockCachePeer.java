package io.ehrelay.rmi;

import java.io.Serializable;
import java.rmi.RemoteException;
import java.rmi.server.RemoteServer;
import java.rmi.server.ServerNotActiveException;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.spi.InboundHandler;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;
import net.sf.ehcache.distribution.RmiEventMessage;

/**
 * The stock-compatible face of one cache: what a stock Ehcache node calls to replicate to this node (its
 * asynchronous {@code send}, its synchronous {@code put}/{@code remove}/{@code removeAll}) and to bootstrap from
 * it ({@code getKeys}, {@code getElements}). Writes go through provider-api, so they are counted like every
 * other received event; arguments were already checked by the export filter. Thread-safe.
 */
final class StockCachePeer implements CachePeer {

    /** What the export filter admits besides the allow-list: the envelope types of stock RMI replication. */
    static final List<String> ENVELOPE = java.util.Collections.unmodifiableList(java.util.Arrays.asList("net.sf.ehcache.Element",
            "net.sf.ehcache.distribution.EventMessage", "net.sf.ehcache.distribution.RmiEventMessage",
            "net.sf.ehcache.distribution.RmiEventMessage$RmiEventType", "java.lang.Enum", "java.util.ArrayList"));

    private final String cacheName;
    private final String urlBase;
    private final InboundHandler inbound;

    StockCachePeer(String cacheName, String urlBase, InboundHandler inbound) {
        this.cacheName = cacheName;
        this.urlBase = urlBase;
        this.inbound = inbound;
    }

    private Ehcache cache() {
        Ehcache cache = inbound.liveCache(cacheName);
        if (cache == null) {
            throw new IllegalStateException("cache " + cacheName + " is not alive on this node");
        }
        return cache;
    }

    static String caller() {
        try {
            return "stock-rmi@" + RemoteServer.getClientHost();
        } catch (ServerNotActiveException e) {
            return "stock-rmi";
        }
    }

    @Override
    public void put(Element element) {
        if (element == null || element.getObjectKey() == null) {
            throw new IllegalArgumentException("no element or no key");
        }
        inbound.onEvent(caller(), ReplicationEvent.put(cacheName, element));
    }

    @Override
    public boolean remove(Serializable key) {
        boolean present = key != null && cache().isKeyInCache(key);
        inbound.onEvent(caller(), ReplicationEvent.ofKey(Op.REMOVE, cacheName, key));
        return present;
    }

    @Override
    public void removeAll() {
        inbound.onEvent(caller(), ReplicationEvent.removeAll(cacheName));
    }

    @Override
    @SuppressWarnings("rawtypes")
    public void send(List eventMessages) throws RemoteException {
        if (eventMessages == null) {
            return;
        }
        String from = caller();
        for (Object o : eventMessages) {
            if (!(o instanceof RmiEventMessage)) {
                throw new RemoteException("ehrelay: not an RmiEventMessage: "
                        + (o == null ? "null" : o.getClass().getName()));
            }
            RmiEventMessage m = (RmiEventMessage) o;
            if (m.getType() == null) {
                throw new RemoteException("ehrelay: RmiEventMessage without a type");
            }
            switch (m.getType()) {
                case PUT:
                    if (m.getElement() == null) {
                        throw new RemoteException("ehrelay: PUT message without an element");
                    }
                    inbound.onEvent(from, ReplicationEvent.put(cacheName, m.getElement()));
                    break;
                case REMOVE:
                    inbound.onEvent(from, ReplicationEvent.ofKey(Op.REMOVE, cacheName, m.getSerializableKey()));
                    break;
                case REMOVE_ALL:
                    inbound.onEvent(from, ReplicationEvent.removeAll(cacheName));
                    break;
                default:
                    throw new RemoteException("ehrelay: unknown event type " + m.getType());
            }
        }
    }

    @Override
    public String getName() {
        return cacheName;
    }

    @Override
    public String getGuid() {
        return cache().getGuid();
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
    public List getKeys() {
        return new ArrayList<Object>(cache().getKeys());
    }

    @Override
    public Element getQuiet(Serializable key) {
        return cache().getQuiet(key);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public List getElements(List keys) {
        List<Element> out = new ArrayList<>();
        if (keys == null) {
            return out;
        }
        Ehcache cache = cache();
        for (Object key : keys) {
            Element e = cache.getQuiet(key);
            if (e != null) {
                out.add(e);
            }
        }
        return out;
    }
}
