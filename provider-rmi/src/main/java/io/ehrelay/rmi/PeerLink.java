package io.ehrelay.rmi;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.rmi.ConnectException;
import java.rmi.ConnectIOException;
import java.rmi.NoSuchObjectException;
import java.rmi.NotBoundException;
import java.rmi.RemoteException;
import java.rmi.UnknownHostException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.RMIClientSocketFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.codec.CodecLimits;
import io.ehrelay.codec.EventCodec;
import io.ehrelay.codec.MalformedFrameException;
import io.ehrelay.codec.ReplicationEvent;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.InboundHandler;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;
import net.sf.ehcache.distribution.RmiEventMessage;

/**
 * This node's side of one peer: finds out once whether the peer is an ehrelay node (its registry holds a
 * {@link RelayRemote}) or a stock one, caches the stubs it looked up, and sends on one sender thread per peer,
 * in order. After a failure the stubs are dropped and looked up again, not before a backoff (doubling up to
 * {@code lookupRetryMaxMillis}) has passed; sends in between fail at once. The sender thread ends when idle.
 */
final class PeerLink {

    /** The kinds of peer. */
    enum Kind { UNKNOWN, EHRELAY, STOCK }

    private static final int STOCK_FIRST_KEYS = 100;

    private final String endpoint;
    private final String host;
    private final int port;
    private final String self;
    private final RMIClientSocketFactory lookupSockets;
    private final RmiSettings settings;
    private final CodecLimits limits;
    private final ThreadPoolExecutor sender;
    private final AtomicLong queuedBytes = new AtomicLong();
    private final Map<String, CachePeer> stockPeers = new ConcurrentHashMap<>();
    private volatile Kind kind = Kind.UNKNOWN;
    private volatile RelayRemote relay;
    private volatile boolean reachable;
    private volatile long retryAt;
    private long backoffMillis;

    PeerLink(String endpoint, String self, RMIClientSocketFactory lookupSockets, RmiSettings settings,
             CodecLimits limits, ThreadFactory threads) {
        this.endpoint = endpoint;
        this.host = RmiUrls.host(endpoint);
        this.port = RmiUrls.port(endpoint);
        this.self = self == null ? "client" : self;
        this.lookupSockets = lookupSockets;
        this.settings = settings;
        this.limits = limits;
        this.sender = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), threads);
        this.sender.allowCoreThreadTimeOut(true);
    }

    String endpoint() {
        return endpoint;
    }

    Kind kind() {
        return kind;
    }

    boolean isReachable() {
        return reachable;
    }

    /**
     * Looks the peer up ahead of the first event, on the sender thread; while it cannot be reached, tries again
     * after each backoff (through {@code retries}), so that {@code peersReachable} tells the truth and the first
     * event finds the stubs ready.
     */
    void connectAhead(java.util.concurrent.ScheduledExecutorService retries) {
        try {
            sender.execute(() -> {
                try {
                    ensureLookedUp();
                } catch (IOException | NotBoundException | RuntimeException e) {
                    long wait;
                    synchronized (this) {
                        wait = Math.max(10, TimeUnit.NANOSECONDS.toMillis(retryAt - System.nanoTime()));
                    }
                    try {
                        retries.schedule(() -> connectAhead(retries), wait, TimeUnit.MILLISECONDS);
                    } catch (RejectedExecutionException closed) {
                        // transport stopped
                    }
                }
            });
        } catch (RejectedExecutionException e) {
            // closed
        }
    }

    /**
     * Queues a batch. With {@code acknowledge} the future completes when the peer applied it; otherwise when an
     * ehrelay peer queued it for applying (a stock peer's {@code send} always returns after applying).
     */
    CompletableFuture<Void> send(Batch batch, boolean acknowledge) {
        int length = batch.length();
        long queued = queuedBytes.addAndGet(length);
        if (queued > settings.peerOutboundMaxBytes && queued != length) {
            queuedBytes.addAndGet(-length);
            return CompletableFuture.failedFuture(new IOException("more than peerOutboundMaxBytes="
                    + settings.peerOutboundMaxBytes + " waiting for peer " + endpoint));
        }
        Send task = new Send(batch, length, acknowledge);
        try {
            sender.execute(task);
        } catch (RejectedExecutionException e) {
            queuedBytes.addAndGet(-length);
            task.future.completeExceptionally(new IOException("link to " + endpoint + " is closed"));
        }
        return task.future;
    }

    /** One queued batch and its future. */
    private final class Send implements Runnable {
        final Batch batch;
        final int length;
        final boolean acknowledge;
        final CompletableFuture<Void> future = new CompletableFuture<>();

        Send(Batch batch, int length, boolean acknowledge) {
            this.batch = batch;
            this.length = length;
            this.acknowledge = acknowledge;
        }

        @Override
        public void run() {
            try {
                // the batch's buffer stays ours until the future completes (the dispatcher abandons a buffer
                // whose send timed out), so the copy is made here, off the dispatcher's thread
                if (!future.isDone()) {
                    deliver(batch.toByteArray(), acknowledge);
                    future.complete(null);
                }
            } catch (Exception | LinkageError e) {
                future.completeExceptionally(e);
            } finally {
                queuedBytes.addAndGet(-length);
            }
        }
    }

    private void deliver(byte[] batch, boolean acknowledge) throws Exception {
        ensureLookedUp();
        try {
            if (kind == Kind.EHRELAY && acknowledge) {
                relay.deliver(self, batch);
            } else if (kind == Kind.EHRELAY) {
                relay.post(self, batch);
            } else {
                sendToStock(batch);
            }
            succeeded();
        } catch (RemoteException e) {
            failed(e);
            throw e;
        }
    }

    /** Finds out what the peer is, unless known; fails at once while a backoff runs. */
    private synchronized void ensureLookedUp() throws IOException, NotBoundException {
        if (kind != Kind.UNKNOWN) {
            return;
        }
        long wait = retryAt - System.nanoTime();
        if (retryAt != 0 && wait > 0) {
            throw new ConnectIOException("peer " + endpoint + " unreachable; next lookup in "
                    + TimeUnit.NANOSECONDS.toMillis(wait) + " ms");
        }
        try {
            Registry registry = LocateRegistry.getRegistry(host, port, lookupSockets);
            try {
                Object found = registry.lookup(RelayRemote.BINDING);
                if (!(found instanceof RelayRemote)) {
                    throw new RemoteException("peer " + endpoint + " binds " + RelayRemote.BINDING + " to a "
                            + found.getClass().getName());
                }
                relay = (RelayRemote) found;
                kind = Kind.EHRELAY;
            } catch (NotBoundException e) {
                kind = Kind.STOCK;
            }
            succeeded();
        } catch (RemoteException e) {
            failed(e);
            throw e;
        }
    }

    private synchronized void succeeded() {
        reachable = true;
        backoffMillis = 0;
        retryAt = 0;
    }

    /** A failure that says the peer (or its objects) went away drops the stubs and starts a backoff. */
    private synchronized void failed(RemoteException e) {
        if (e instanceof ConnectException || e instanceof ConnectIOException || e instanceof NoSuchObjectException
                || e instanceof UnknownHostException || e instanceof java.rmi.UnmarshalException
                || e instanceof java.rmi.MarshalException) {
            reachable = false;
            kind = Kind.UNKNOWN;
            relay = null;
            stockPeers.clear();
            backoffMillis = backoffMillis == 0 ? 100 : Math.min(backoffMillis * 2, settings.lookupRetryMaxMillis);
            retryAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(backoffMillis);
        }
    }

    /** Lets the next send look the peer up at once (the peer announced itself again). */
    synchronized void retryNow() {
        retryAt = 0;
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
            throw new IOException("stock peer " + endpoint + " has no cache '" + cacheName + "' bound", e);
        }
        if (!(found instanceof CachePeer)) {
            throw new IOException("stock peer " + endpoint + " binds '" + cacheName + "' to a "
                    + found.getClass().getName());
        }
        p = (CachePeer) found;
        stockPeers.put(cacheName, p);
        return p;
    }

    /** Sends a batch as Ehcache's own messages: one {@code send} per run of events of one cache. */
    private void sendToStock(byte[] batch) throws IOException, MalformedFrameException {
        EventCodec.DecodedBatch decoded = EventCodec.decodeBatch(ByteBuffer.wrap(batch), limits);
        List<ReplicationEvent> events = decoded.events();
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

    // ---- state transfer ----------------------------------------------------------------------------------------

    /**
     * Fetches a cache's content, in the calling thread (the node's bootstrap thread): through the relay, or from a
     * stock peer with {@code getKeys} and {@code getElements} in chunks sized to about {@code maxChunkBytes}.
     */
    void fetchState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink) throws Exception {
        ensureLookedUp();
        try {
            if (kind == Kind.EHRELAY) {
                long id = relay.openState(cacheName);
                for (byte[] chunk = relay.nextState(id, maxChunkBytes); chunk != null;
                     chunk = relay.nextState(id, maxChunkBytes)) {
                    sink.accept(chunk);
                }
            } else {
                fetchStockState(cacheName, maxChunkBytes, sink);
            }
            succeeded();
        } catch (RemoteException e) {
            failed(e);
            throw e;
        }
    }

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
                sink.accept(batchOf(events, size));
                int perKey = Math.max(1, size / events.size());
                perChunk = Math.max(1, Math.min(10_000, maxChunkBytes / perKey));
            }
        }
    }

    private static byte[] batchOf(List<byte[]> events, int size) {
        byte[] out = new byte[EventCodec.BATCH_HEADER_BYTES + size];
        System.arraycopy(EventCodec.batchHeader(events.size()), 0, out, 0, EventCodec.BATCH_HEADER_BYTES);
        int at = EventCodec.BATCH_HEADER_BYTES;
        for (byte[] e : events) {
            System.arraycopy(e, 0, out, at, e.length);
            at += e.length;
        }
        return out;
    }

    /** Stops the sender thread; queued sends fail. */
    void close(long waitMillis) {
        sender.shutdown();
        try {
            if (!sender.awaitTermination(waitMillis, TimeUnit.MILLISECONDS)) {
                failAll(sender.shutdownNow());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failAll(sender.shutdownNow());
        }
    }

    private void failAll(List<Runnable> never) {
        for (Runnable r : never) {
            if (r instanceof Send) {
                ((Send) r).future.completeExceptionally(new IOException("link to " + endpoint + " closed"));
            }
        }
    }
}
