package io.ehrelay.loopback;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.spi.Batch;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import io.ehrelay.spi.TransportContext;

/**
 * An in-memory transport between CacheManagers of one JVM, for testing everything above the network: each
 * node has one inbound thread; a send completes when the receiving node has applied the batch, so a stalled
 * receiver pushes back into the sender's bounded queue as a slow network peer would. Endpoints look like
 * {@code loopback://<cacheManager>/<n>}. Thread-safe.
 */
public final class LoopbackTransport implements Transport {

    private static final Map<String, LoopbackTransport> NODES = new ConcurrentHashMap<>();
    private static final AtomicInteger COUNTER = new AtomicInteger();

    private volatile String endpoint;
    private volatile TransportContext context;
    private volatile ExecutorService inbound;

    @Override
    public void start(TransportContext ctx) {
        this.context = ctx;
        this.inbound = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                ctx.threads("loopback-in"));
        this.endpoint = "loopback://" + ctx.cacheManagerName() + "/" + COUNTER.incrementAndGet();
        NODES.put(endpoint, this);
    }

    /** Loopback peers are named {@code loopback://<cacheManager>/<n>}. */
    @Override
    public String normalizePeer(String configured) {
        if (!configured.startsWith("loopback://")) {
            throw new IllegalArgumentException("not a loopback endpoint (loopback://<cacheManager>/<n>)");
        }
        return configured;
    }

    @Override
    public String localEndpoint() {
        return endpoint;
    }

    @Override
    public CompletableFuture<Void> send(Peer peer, Batch batch, boolean acknowledge) {
        LoopbackTransport target = NODES.get(peer.endpoint());
        if (target == null) {
            return CompletableFuture.failedFuture(new ConnectException("no loopback node at " + peer));
        }
        byte[] bytes = batch.toByteArray();
        String from = endpoint;
        return target.run(() -> {
            target.admit();
            target.context.inbound().onEvents(from, ByteBuffer.wrap(bytes));
            return null;
        });
    }

    /** Every loopback node is on this host: it is refused only when unauthenticatedPeers leaves loopback out. */
    private void admit() throws IOException {
        if (!context.peerGate().admits(InetAddress.getLoopbackAddress(), "connection")) {
            throw new IOException("refused by unauthenticatedPeers");
        }
    }

    @Override
    public CompletableFuture<Void> requestState(Peer peer, String cacheName, int maxChunkBytes,
                                                InboundHandler.ChunkSink sink) {
        LoopbackTransport target = NODES.get(peer.endpoint());
        if (target == null) {
            return CompletableFuture.failedFuture(new ConnectException("no loopback node at " + peer));
        }
        return target.run(() -> {
            target.admit();
            target.context.inbound().onStateRequest(cacheName, maxChunkBytes, sink);
            return null;
        });
    }

    private interface Work {
        Void call() throws Exception;
    }

    private CompletableFuture<Void> run(Work work) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        try {
            inbound.execute(() -> {
                try {
                    work.call();
                    f.complete(null);
                } catch (Throwable t) {
                    f.completeExceptionally(t);
                }
            });
        } catch (RejectedExecutionException e) {
            f.completeExceptionally(new ConnectException("loopback node " + endpoint + " stopped"));
        }
        return f;
    }

    @Override
    public boolean isReachable(Peer peer) {
        return NODES.containsKey(peer.endpoint());
    }

    @Override
    public void stop() {
        if (endpoint != null) {
            NODES.remove(endpoint);
        }
        if (inbound != null) {
            inbound.shutdownNow();
            try {
                inbound.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
