package io.ehrelay.spi;

import java.io.Serializable;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.rmi.AccessException;
import java.rmi.RemoteException;
import java.rmi.server.RemoteServer;
import java.rmi.server.ServerNotActiveException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;
import net.sf.ehcache.distribution.RmiEventMessage;

/**
 * Ehcache's {@link CachePeer} face of one local cache: what {@code CacheManagerPeerListener.getBoundCachePeers()}
 * lists, one per replicated cache, and what the RMI transport binds for stock Ehcache nodes (their asynchronous
 * {@code send}, their synchronous {@code put}/{@code remove}/{@code removeAll}, their bootstrap's
 * {@code getKeys}/{@code getElements}). As with stock, writes apply to the local cache without being replicated
 * further; they go through the node's {@link InboundHandler}, so they are counted like every other received
 * event. Thread-safe.
 */
public final class LocalCachePeer implements CachePeer {

    /** What an RMI export filter admits besides the allow-list: the envelope types of stock RMI replication. */
    public static final List<String> ENVELOPE = Collections.unmodifiableList(Arrays.asList(
            "net.sf.ehcache.Element", "net.sf.ehcache.distribution.EventMessage",
            "net.sf.ehcache.distribution.RmiEventMessage", "net.sf.ehcache.distribution.RmiEventMessage$RmiEventType",
            "java.lang.Enum", "java.util.ArrayList"));

    private final String cacheName;
    private final String urlBase;
    private final InboundHandler inbound;
    private final PeerGate gate;
    /** The last host this thread found admitted: a connection's calls come from one host, checked once. */
    private final ThreadLocal<String> admittedHost = new ThreadLocal<>();

    /**
     * @param urlBase what {@link #getUrlBase()} answers: see {@link #urlBase(String)}
     * @param inbound the node's receiving side, which applies and counts what this peer is sent
     */
    public LocalCachePeer(String cacheName, String urlBase, InboundHandler inbound) {
        this(cacheName, urlBase, inbound, null);
    }

    /**
     * @param gate when not {@code null}, every remote call (they are unauthenticated: stock nodes cannot prove
     *             anything) is served only if the gate admits the caller's host; refused ones read and change
     *             nothing and fail with an {@link AccessException}
     */
    public LocalCachePeer(String cacheName, String urlBase, InboundHandler inbound, PeerGate gate) {
        this.cacheName = cacheName;
        this.urlBase = urlBase;
        this.inbound = inbound;
        this.gate = gate;
    }

    /** Refuses a remote call from a host the gate does not admit (a local call is always served). */
    private void admit() throws AccessException {
        String refusal = callerRefusal();
        if (refusal != null) {
            throw new AccessException(refusal);
        }
    }

    /**
     * Why the remote call being read or served on this thread is refused, or {@code null} when it may proceed (a
     * local call, no gate, or a host the gate admits). A refusal has been counted and logged by the gate. Cheap
     * enough to ask for every object of a call's arguments: the RMI export filter asks it before the JDK reads
     * anything of a call, so that a host the gate does not admit costs the node one check and no decoding.
     */
    public String callerRefusal() {
        if (gate == null) {
            return null;
        }
        String host;
        try {
            host = RemoteServer.getClientHost();
        } catch (ServerNotActiveException e) {
            return null;
        }
        if (host.equals(admittedHost.get())) {
            return null;
        }
        InetAddress address;
        try {
            address = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            return "ehrelay: unauthorized: unknown caller host " + host;
        }
        if (!gate.admits(address, "stock RMI call to cache " + cacheName)) {
            return "ehrelay: unauthorized: this node admits unauthenticated (stock RMI) callers only from the hosts "
                    + "in its unauthenticatedPeers";
        }
        admittedHost.set(host);
        return null;
    }

    private Ehcache cache() {
        Ehcache cache = inbound.liveCache(cacheName);
        if (cache == null) {
            throw new IllegalStateException("cache " + cacheName + " is not alive on this node");
        }
        return cache;
    }

    /**
     * Ehcache's URL base of a node that transports name by {@code endpoint}: {@code //host:port} for an endpoint
     * {@code host:port} (as stock RMI's), the endpoint itself when it is a URL ({@code http://…}).
     */
    public static String urlBase(String endpoint) {
        return endpoint.contains("://") ? endpoint : "//" + endpoint;
    }

    /** Who is calling: the RMI client's host within a remote call, else a local caller. */
    public static String caller() {
        try {
            return "stock-rmi@" + RemoteServer.getClientHost();
        } catch (ServerNotActiveException e) {
            return "local CachePeer call";
        }
    }

    @Override
    public void put(Element element) throws RemoteException {
        admit();
        if (element == null || element.getObjectKey() == null) {
            throw new IllegalArgumentException("no element or no key");
        }
        inbound.onEvent(caller(), ReplicationEvent.put(cacheName, element));
    }

    @Override
    public boolean remove(Serializable key) throws RemoteException {
        admit();
        boolean present = key != null && cache().isKeyInCache(key);
        inbound.onEvent(caller(), ReplicationEvent.ofKey(Op.REMOVE, cacheName, key));
        return present;
    }

    @Override
    public void removeAll() throws RemoteException {
        admit();
        inbound.onEvent(caller(), ReplicationEvent.removeAll(cacheName));
    }

    @Override
    @SuppressWarnings("rawtypes")
    public void send(List eventMessages) throws RemoteException {
        admit();
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
    public String getGuid() throws RemoteException {
        admit();
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
    public List getKeys() throws RemoteException {
        admit();
        List<?> held = cache().getKeys(); // Ehcache 2: a raw List
        return new ArrayList<Object>(held);
    }

    @Override
    public Element getQuiet(Serializable key) throws RemoteException {
        admit();
        return cache().getQuiet(key);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public List getElements(List keys) throws RemoteException {
        admit();
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
