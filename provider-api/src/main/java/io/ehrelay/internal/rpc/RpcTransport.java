package io.ehrelay.internal.rpc;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.ehrelay.internal.Futures;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import io.ehrelay.spi.TransportContext;

/**
 * The peer side of a request/response transport: one {@link PeerChannel} per peer, created on first use or
 * when the directory names the peer (then connected ahead), closed when the peer leaves; a peer's hello ends
 * the backoff towards it. A transport supplies its channels and its listening side. Thread-safe.
 */
public abstract class RpcTransport<C extends PeerChannel> implements Transport {

    private final Map<String, C> channels = new ConcurrentHashMap<>();
    private ScheduledThreadPoolExecutor retries;
    /** Probes idle peers ({@link #probesIdlePeers}); {@code null} when this transport does not. */
    private ScheduledThreadPoolExecutor probes;
    private volatile boolean stopped;

    /**
     * How often an idle peer is probed ({@link PeerChannel#probeIfIdle}: one that no call succeeded with for half of
     * this): a peer that crashed while idle leaves {@code listRemoteCachePeers} within about this, plus the call.
     */
    public static final long IDLE_PROBE_MILLIS = 2000;

    /**
     * Whether this transport's channels {@linkplain PeerChannel#probe probe} idle peers (on a thread of their own,
     * which looks at each channel every {@value #IDLE_PROBE_MILLIS} ms; sends never wait for it). False by default:
     * for a transport whose membership notices a departed peer by itself.
     */
    protected boolean probesIdlePeers() {
        return false;
    }

    /** Readies the channels' background retries and the probe of idle peers; call first in {@link #start}. */
    protected final void startChannels(TransportContext ctx) {
        retries = new ScheduledThreadPoolExecutor(1, ctx.threads("lookup"));
        retries.setKeepAliveTime(10, TimeUnit.SECONDS);
        retries.allowCoreThreadTimeOut(true);
        retries.setRemoveOnCancelPolicy(true);
        if (!probesIdlePeers()) {
            return;
        }
        probes = new ScheduledThreadPoolExecutor(1, ctx.threads("probe"));
        probes.scheduleWithFixedDelay(() -> {
            for (C c : channels.values()) {
                try {
                    c.probeIfIdle(IDLE_PROBE_MILLIS / 2, retries);
                } catch (RuntimeException e) {
                    // one peer's trouble; the others are probed all the same
                }
            }
        }, IDLE_PROBE_MILLIS, IDLE_PROBE_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * Runs {@code task} every {@code periodMillis} on the channels' background thread (which then stays), until
     * the transport stops; a task that throws is logged by nobody and keeps its schedule, so catch inside.
     */
    protected final void every(long periodMillis, Runnable task) {
        retries.scheduleWithFixedDelay(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                // the task's own business; the schedule goes on
            }
        }, periodMillis, periodMillis, TimeUnit.MILLISECONDS);
    }

    /** A new channel to {@code endpoint} (a normalized peer endpoint). */
    protected abstract C newChannel(String endpoint);

    protected final C channel(Peer peer) {
        return channels.computeIfAbsent(peer.endpoint(), this::newChannel);
    }

    /** The channels by endpoint, for diagnostics. */
    protected final Map<String, C> channels() {
        return channels;
    }

    protected final boolean stopped() {
        return stopped;
    }

    @Override
    public CompletableFuture<Void> send(Peer peer, Batch batch, boolean acknowledge) {
        if (stopped) {
            return Futures.failed(new IllegalStateException("transport stopped"));
        }
        return channel(peer).send(batch, acknowledge);
    }

    /** Runs in the calling thread (the node's bootstrap thread) and returns a completed future. */
    @Override
    public CompletableFuture<Void> requestState(Peer peer, String cacheName, int maxChunkBytes,
                                                InboundHandler.ChunkSink sink) {
        try {
            channel(peer).fetchState(cacheName, maxChunkBytes, sink);
            return CompletableFuture.completedFuture(null);
        } catch (Exception e) {
            return Futures.failed(e);
        }
    }

    @Override
    public boolean isReachable(Peer peer) {
        C c = channels.get(peer.endpoint());
        return c != null && c.isReachable();
    }

    @Override
    public boolean isReachableWithin(Peer peer, long millis) throws InterruptedException {
        C c = channels.get(peer.endpoint());
        return c != null && c.isReachableWithin(millis);
    }

    @Override
    public void peersChanged(List<Peer> peers) {
        if (stopped) {
            return;
        }
        Set<String> current = new HashSet<>();
        for (Peer p : peers) {
            current.add(p.endpoint());
            boolean fresh = !channels.containsKey(p.endpoint());
            C c = channel(p);
            if (fresh) {
                c.connectAhead(retries);
            } else {
                c.retryNow();
            }
        }
        for (String gone : new ArrayList<>(channels.keySet())) {
            if (!current.contains(gone)) {
                C c = channels.remove(gone);
                if (c != null) {
                    c.close(0);
                }
            }
        }
    }

    /**
     * A peer is up: end the backoff towards it and connect now, if it is one of ours. Never on the caller's
     * thread: the caller is the peer's own connect, which may be what this node's channel is waiting for.
     */
    protected final void peerSaidHello(String endpoint) {
        C c = channels.get(endpoint);
        if (c != null && !c.isReachable() && !stopped) {
            try {
                retries.execute(() -> {
                    c.retryNow();
                    c.connectAhead(retries);
                });
            } catch (RejectedExecutionException e) {
                // stopping
            }
        }
    }

    /** Marks the transport stopped; returns false when it already was. */
    protected final boolean markStopped() {
        synchronized (channels) {
            if (stopped) {
                return false;
            }
            stopped = true;
            return true;
        }
    }

    /** Stops the probes, closes every channel (each waits up to {@code waitMillis} for its queue) and the retries. */
    protected final void stopChannels(long waitMillis) {
        if (probes != null) {
            probes.shutdownNow();
        }
        for (C c : channels.values()) {
            c.close(waitMillis);
        }
        channels.clear();
        if (retries != null) {
            retries.shutdownNow();
        }
    }
}
