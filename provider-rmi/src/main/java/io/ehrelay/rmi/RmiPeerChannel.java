package io.ehrelay.rmi;

import java.io.IOException;
import java.io.Serializable;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.rmi.AccessException;
import java.rmi.ConnectException;
import java.rmi.ConnectIOException;
import java.rmi.MarshalException;
import java.rmi.NoSuchObjectException;
import java.rmi.NotBoundException;
import java.rmi.RemoteException;
import java.rmi.UnknownHostException;
import java.rmi.UnmarshalException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.RMIClientSocketFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;

import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.internal.rpc.PeerChannel;
import io.ehrelay.internal.rpc.RpcCalls;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.PeerGate;
import io.ehrelay.spi.ReplicationEvent;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;
import net.sf.ehcache.distribution.RmiEventMessage;

/**
 * This node's side of one RMI peer: finds out once whether the peer is an ehrelay node (its registry holds a
 * {@link RelayRemote}) or a stock one, and caches the stubs it looked up. Ehrelay peers get the relay
 * protocol; stock peers Ehcache's own messages, and are bootstrapped from with {@code getKeys} and
 * {@code getElements}. Ordering, bounds and backoff are {@link PeerChannel}'s.
 */
final class RmiPeerChannel extends PeerChannel {

    private static final int STOCK_FIRST_KEYS = 100;
    private static final int SCRATCH_BYTES = 64 * 1024;

    private final String host;
    private final int port;
    private final String self;
    private final boolean listening;
    private final RMIClientSocketFactory lookupSockets;
    private final CodecLimits limits;
    private final Map<String, CachePeer> stockPeers = new ConcurrentHashMap<>();

    private volatile Link link = Link.NONE;
    private final ClusterSecret secret;
    private final PeerGate stockGate;

    /**
     * What a batch to an ehrelay relay is written through, reused: {@link PeerChannel} runs transmits one at a time
     * (its sender thread, or a synchronous put's thread, under the same lock).
     */
    private final byte[] scratch = new byte[SCRATCH_BYTES];

    /**
     * @param secret    the cluster secret ehrelay peers must prove (and this node proves to them), or {@code null}
     * @param stockGate with a secret: which hosts this node may treat as stock peers (which cannot prove it);
     *                  {@code null} without one
     */
    RmiPeerChannel(String endpoint, String self, RMIClientSocketFactory lookupSockets, RmiSettings settings,
                   CodecLimits limits, ThreadFactory threads, Clock clock, ClusterSecret secret,
                   PeerGate stockGate) {
        super(endpoint, settings.peerOutboundMaxBytes, settings.retryMaxMillis, threads, clock);
        this.secret = secret;
        this.stockGate = stockGate;
        this.host = RmiUrls.host(endpoint);
        this.port = RmiUrls.port(endpoint);
        this.self = self == null ? "client" : self;
        this.listening = self != null;
        this.lookupSockets = lookupSockets;
        this.limits = limits;
    }

    /** The kinds of peer. */
    enum Kind { UNKNOWN, EHRELAY, STOCK }
    /** What the peer turned out to be, its relay and the session with it: one value, read once per call. */
    private static final class Link {
        static final Link NONE = new Link(Kind.UNKNOWN, null, null);
        final Kind kind;
        final RelayRemote relay;
        /** The session's credentials ({@code null} without a cluster secret): a fresh one for every call. */
        final RpcSessions.Credentials credentials;

        Link(Kind kind, RelayRemote relay, RpcSessions.Credentials credentials) {
            this.kind = kind;
            this.relay = relay;
            this.credentials = credentials;
        }

        /** The credential of the next call, or {@code null} without a cluster secret. */
        byte[] next() {
            return credentials == null ? null : credentials.next();
        }
    }

    Kind kind() {
        return link.kind;
    }

    @Override
    protected void connect() throws IOException {
        Registry registry = LocateRegistry.getRegistry(host, port, lookupSockets);
        try {
            Object found = registry.lookup(RelayRemote.BINDING);
            if (!(found instanceof RelayRemote)) {
                throw new RemoteException("peer " + endpoint() + " binds " + RelayRemote.BINDING + " to a "
                        + found.getClass().getName());
            }
            RelayRemote r = (RelayRemote) found;
            RpcSessions.Credentials s = secret == null ? null : openSession(r, secret, self);
            if (listening) {
                r.hello(RelayBatch.name(self), s == null ? null : s.next());
            }
            link = new Link(Kind.EHRELAY, r, s);
        } catch (NotBoundException e) {
            if (registry.list().length == 0) {
                // an ehrelay node binds its relay before anything else, a stock node binds its caches: a registry
                // that holds nothing yet belongs to a node still starting (nodes started together meet this
                // window), which is tried again rather than taken for a stock node for as long as it runs
                throw new ConnectException("peer " + endpoint() + " has bound nothing in its RMI registry yet");
            }
            if (secret != null && !stockGate.admits(InetAddress.getByName(host),
                    "stock RMI peer (this node would send it events)")) {
                throw new IOException("peer " + endpoint() + " has no ehrelay relay, so it cannot prove the cluster "
                        + "secret: this node sends to stock RMI peers only at hosts listed in unauthenticatedPeers");
            }
            link = new Link(Kind.STOCK, null, null);
        }
    }

    /**
     * Opens a session with {@code relay} under the name {@code self}: proves {@code secret} to it, and checks
     * that the peer holds it too.
     */
    static RpcSessions.Credentials openSession(RelayRemote relay, ClusterSecret secret,
                                                                  String self) throws IOException {
        return RpcSessions.open(secret, self, new RpcSessions.Listener() {
            @Override
            public byte[] challenge() throws IOException {
                return relay.challenge();
            }

            @Override
            public byte[] authenticate(byte[] challenge, byte[] response) throws IOException {
                return relay.authenticate(RelayBatch.name(self), challenge, response);
            }
        });
    }

    /** An ehrelay relay's hello; a stock peer's registry, listed (stock looks a peer up there too). */
    @Override
    protected boolean probe() throws Exception {
        Link l = link;
        if (l.kind == Kind.EHRELAY) {
            l.relay.hello(RelayBatch.name(self), l.next());
        } else if (l.kind == Kind.STOCK) {
            LocateRegistry.getRegistry(host, port, lookupSockets).list();
        } else {
            return false;
        }
        return true;
    }

    @Override
    protected void disconnect() {
        link = Link.NONE;
        stockPeers.clear();
    }

    @Override
    protected boolean peerGone(Exception e) {
        // a batch the peer refused while reading it (too large, no room) comes back as a ServerException: that
        // batch failed (counted, the peer owes a resync), but the peer is not gone; a refused session is
        return e instanceof ConnectException || e instanceof ConnectIOException || e instanceof NoSuchObjectException
                || e instanceof UnknownHostException || e instanceof UnmarshalException
                || e instanceof MarshalException || e instanceof AccessException
                || RpcSessions.isRefusal(e);
    }

    @Override
    protected void transmit(byte[] batch, boolean acknowledge) throws Exception {
        Link l = link;
        if (l.kind == Kind.EHRELAY && acknowledge) {
            l.relay.deliver(new RelayBatch(self, l.next(), batch));
        } else if (l.kind == Kind.EHRELAY) {
            l.relay.post(new RelayBatch(self, l.next(), batch));
        } else if (l.kind == Kind.UNKNOWN) {
            throw new ConnectException("not connected to " + endpoint());
        } else {
            sendToStock(batch);
        }
    }

    /**
     * To an ehrelay relay, writes the batch from its buffer while RMI marshals the call (no array of the batch
     * per send); a stock peer gets Ehcache's messages, made from the batch's array.
     */
    @Override
    protected void transmit(Batch batch, boolean acknowledge) throws Exception {
        Link l = link;
        if (l.kind != Kind.EHRELAY) {
            super.transmit(batch, acknowledge);
        } else if (acknowledge) {
            l.relay.deliver(new RelayBatch(self, l.next(), batch, scratch));
        } else {
            l.relay.post(new RelayBatch(self, l.next(), batch, scratch));
        }
    }

    @Override
    protected void transferState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink)
            throws Exception {
        Link l = link;
        if (l.kind == Kind.UNKNOWN) {
            throw new ConnectException("not connected to " + endpoint());
        }
        if (l.kind == Kind.EHRELAY) {
            RelayRemote r = l.relay;
            Link s = l;
            fetchThroughRelay(new RpcCalls() {
                @Override
                public void hello(String fromEndpoint) throws IOException {
                    r.hello(RelayBatch.name(fromEndpoint), s.next());
                }

                @Override
                public void deliver(String fromEndpoint, byte[] batch) throws IOException {
                    r.deliver(new RelayBatch(fromEndpoint, s.next(), batch));
                }

                @Override
                public void post(String fromEndpoint, byte[] batch) throws IOException {
                    r.post(new RelayBatch(fromEndpoint, s.next(), batch));
                }

                @Override
                public long openState(String name) throws IOException {
                    return r.openState(s.next(), RelayBatch.name(name));
                }

                @Override
                public byte[] nextState(long transferId, int maxChunk) throws IOException {
                    return r.nextState(s.next(), transferId, maxChunk);
                }
            }, cacheName, maxChunkBytes, sink);
        } else {
            fetchStockState(cacheName, maxChunkBytes, sink);
        }
    }

    // ---- stock peers -------------------------------------------------------------------------------------------

    private CachePeer stockPeer(String cacheName) throws IOException {
        CachePeer p = stockPeers.get(cacheName);
        if (p != null) {
            return p;
        }
        Registry registry = LocateRegistry.getRegistry(host, port, lookupSockets);
        Object found;
        try {
            found = registry.lookup(cacheName);
        } catch (NotBoundException e) {
            throw new IOException("stock peer " + endpoint() + " has no cache '" + cacheName + "' bound", e);
        }
        if (!(found instanceof CachePeer)) {
            throw new IOException("stock peer " + endpoint() + " binds '" + cacheName + "' to a "
                    + found.getClass().getName());
        }
        p = (CachePeer) found;
        stockPeers.put(cacheName, p);
        return p;
    }

    /** Sends a batch as Ehcache's own messages: one {@code send} per run of events of one cache. */
    private void sendToStock(byte[] batch) throws IOException, MalformedFrameException {
        List<ReplicationEvent> events = EventDecoder.decodeBatch(ByteBuffer.wrap(batch), limits).events();
        int i = 0;
        while (i < events.size()) {
            String cache = events.get(i).cacheName();
            List<RmiEventMessage> run = new ArrayList<>();
            while (i < events.size() && events.get(i).cacheName().equals(cache)) {
                run.add(toStock(events.get(i)));
                i++;
            }
            CachePeer peer = stockPeer(cache);
            try {
                peer.send(run);
            } catch (NoSuchObjectException e) {
                stockPeers.remove(cache);
                throw e;
            }
        }
    }

    private static RmiEventMessage toStock(ReplicationEvent e) throws IOException {
        switch (e.op()) {
            case PUT:
                return new RmiEventMessage(null, RmiEventMessage.RmiEventType.PUT, serializable(e.key()),
                        e.toElement());
            case INVALIDATE:
            case REMOVE:
                return new RmiEventMessage(null, RmiEventMessage.RmiEventType.REMOVE, serializable(e.key()), null);
            case REMOVE_ALL:
                return new RmiEventMessage(null, RmiEventMessage.RmiEventType.REMOVE_ALL, null, null);
            default:
                throw new IOException("no stock message for " + e.op());
        }
    }

    private static Serializable serializable(Object key) throws IOException {
        if (!(key instanceof Serializable)) {
            throw new IOException("a stock RMI peer needs Serializable keys; got " + key.getClass().getName());
        }
        return (Serializable) key;
    }

    /** {@code getKeys}, then {@code getElements} in chunks sized to about {@code maxChunkBytes}. */
    private void fetchStockState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink)
            throws Exception {
        CachePeer peer = stockPeer(cacheName);
        List<?> keys = peer.getKeys();
        int at = 0;
        int perChunk = STOCK_FIRST_KEYS;
        while (at < keys.size()) {
            List<Object> ask = new ArrayList<>(keys.subList(at, Math.min(keys.size(), at + perChunk)));
            at += ask.size();
            List<?> elements = peer.getElements(ask);
            List<byte[]> events = new ArrayList<>(elements.size());
            int size = 0;
            for (Object o : elements) {
                if (o instanceof Element) {
                    byte[] ev = EventCodec.encodePut(cacheName, (Element) o);
                    events.add(ev);
                    size += ev.length;
                }
            }
            if (!events.isEmpty()) {
                sink.accept(EventCodec.batch(events, size));
                int perKey = Math.max(1, size / events.size());
                perChunk = Math.max(1, Math.min(10_000, maxChunkBytes / perKey));
            }
        }
    }
}
