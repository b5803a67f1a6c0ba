
package io.ehrelay.internal.engine;

import java.io.IOException;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.ByteSink;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared dispatcher of one CacheManager: {@code dispatcherThreads} threads, one per queue lane, however
 * many caches replicate. Each takes a batch (bounded by count, bytes and linger), sends the same bytes to
 * every peer, and waits up to {@code sendTimeoutMillis} for each peer to take it, so a slow peer pushes back
 * into the bounded queue instead of growing memory. Outcomes are counted per event and peer.
 *
 * <p>Lifecycle: {@link #start()} once; {@link #stop(long)} closes the queue, lets the threads drain it up to
 * the given time, then interrupts them and counts whatever is left as dropped.
 */
final class Dispatcher {

    private static final Logger LOG = LoggerFactory.getLogger(Dispatcher.class);
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long BEAT_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    /** {@link #step}'s answer when the lane is done. */
    private static final InFlight STOPPED = new InFlight(Collections.emptyList(), null, 0, null, 0,
            null, null);

    private final ReplicationQueue queue;
    private final NodeConfig config;
    private final Supplier<List<Peer>> peers;
    private final Transport transport;
    private final ReplicationMetrics metrics;
    private final ThreadFactory threads;
    private final RateLimitedLog warn;
    private final List<Thread> workers = new ArrayList<>();
    private final Consumer<Peer> undelivered;
    /** Per lane: a random id for this run's sequence of batches, and the last batch number used. */
    private final long[] streams;
    private final AtomicLongArray seqs;
    /** Per lane: events were lost since the lane's last batch (the next batch carries {@code FLAG_LOST}). */
    private final AtomicIntegerArray lost;
    /** Per lane, reused batch after batch: where each event of the batch being built starts in its buffer. */
    private final int[][] starts;
    /**
     * Per lane, reused: the values of the batch being built that the transport keeps by reference; {@code null}
     * entries when it copies them ({@link Transport#sendsValuesByReference()}).
     */
    private final ValueRefs[] refs;
    /** Per lane: when it last sent an empty batch to a peer that has not confirmed one yet. */
    private final long[] lastBeat;
    /**
     * Per lane: peers a batch failed to and no later batch reached yet. While there are any, an idle lane sends an
     * empty batch every {@link #BEAT_NANOS}: when one arrives, its number shows the peer what it missed.
     */
    private final Set<String>[] unconfirmed;
    private final Clock clock;
    private final Membership membership;
    /** Run by lane 0's loop (at least every 100 ms): starts anti-entropy rounds when due. */
    private final Runnable tick;
    private final PeerStats peerStats;
    private volatile boolean stopping;

    /**
     * @param undelivered told about every peer that could not take a batch (the node owes it a resync)
     */
    Dispatcher(ReplicationQueue queue, NodeConfig config, Supplier<List<Peer>> peers, Transport transport,
               ReplicationMetrics metrics, ThreadFactory threads, RateLimitedLog warn,
               Consumer<Peer> undelivered, Clock clock, Membership membership, Runnable tick,
               PeerStats peerStats) {
        this.tick = tick;
        this.peerStats = peerStats;
        this.clock = clock;
        this.membership = membership;
        this.undelivered = undelivered;
        this.streams = new long[queue.laneCount()];
        this.seqs = new AtomicLongArray(queue.laneCount());
        this.lost = new AtomicIntegerArray(queue.laneCount());
        this.starts = new int[queue.laneCount()][];
        this.refs = new ValueRefs[queue.laneCount()];
        this.lastBeat = new long[queue.laneCount()];
        @SuppressWarnings({"unchecked", "rawtypes"})
        Set<String>[] u = new Set[queue.laneCount()];
        for (int i = 0; i < u.length; i++) {
            u[i] = ConcurrentHashMap.newKeySet();
        }
        this.unconfirmed = u;
        SecureRandom random = new SecureRandom();
        for (int i = 0; i < streams.length; i++) {
            long id;
            do {
                id = random.nextLong();
            } while (id == 0);
            streams[i] = id;
        }
        this.queue = queue;
        this.config = config;
        this.peers = peers;
        this.transport = transport;
        this.metrics = metrics;
        this.threads = threads;
        this.warn = warn;
    }

    /** The lane's stream id. */
    long stream(int lane) {
        return streams[lane];
    }

    /** The number of the lane's last batch: events queued later go in batches with higher numbers. */
    long lastSeq(int lane) {
        return seqs.get(lane);
    }

    /** Marks every lane: every peer receiving the next batches resynchronises from this node. */
    void markLostAll() {
        for (int i = 0; i < lost.length(); i++) {
            lost.set(i, 1);
        }
    }

    void start() {
        for (int lane = 0; lane < queue.laneCount(); lane++) {
            final int l = lane;
            Thread t = threads.newThread(() -> run(l));
            workers.add(t);
            t.start();
        }
    }

    /**
     * One lane's loop. Two batch buffers alternate, so the next batch is encoded while the transport still
     * writes the previous one; at most two batches per lane are in flight, and each peer receives them in order.
     */
    private void run(int lane) {
        long linger = TimeUnit.MILLISECONDS.toNanos(config.batchLingerMillis());
        if (transport.sendsValuesByReference()) {
            refs[lane] = new ValueRefs();
        }
        ArrayDeque<ByteSink> free = new ArrayDeque<>(2);
        free.add(newBuffer());
        free.add(newBuffer());
        InFlight previous = null;
        lastBeat[lane] = clock.nanoTime();
        try {
            while (true) {
                List<ReplicationQueue.Entry> batch = Collections.emptyList();
                try {
                    if (lane == 0) {
                        tick.run();
                    }
                    batch = queue.take(lane, config.batchMaxEvents(), config.batchMaxBytes(), linger,
                            previous == null ? POLL_NANOS : 0);
                    previous = step(lane, batch, previous, free);
                    if (previous == STOPPED) {
                        return;
                    }
                } catch (RuntimeException | Error unexpected) {
                    // a lane that ended here would stop replication without a word: what it held is lost (the
                    // lost flag makes the peers resync it) and the lane goes on with a fresh buffer if needed
                    lostUnexpectedly(lane, batch, unexpected);
                    previous = null;
                    if (free.isEmpty()) {
                        free.add(newBuffer());
                    }
                }
            }
        } catch (InterruptedException e) {
            // stop() ran out of drain time; what is still queued is counted there, what is in flight here
            if (previous != null) {
                for (ReplicationQueue.Entry ev : previous.events) {
                    ev.cache.onFailed();
                }
            }
        }
    }

    /**
     * One turn of a lane's loop with what the queue gave: sends it, settles the batch before it; returns the batch
     * now in flight (null: none), or {@link #STOPPED}.
     */
    private InFlight step(int lane, List<ReplicationQueue.Entry> batch, InFlight previous, ArrayDeque<ByteSink> free)
            throws InterruptedException {
        if (batch.isEmpty()) {
            membership.retryUndelivered();
            if (previous != null) {
                free.add(settle(previous));
                return null;
            }
            if (stopping) {
                return STOPPED;
            }
            if (queue.takeLostIfEmpty(lane) || lost.get(lane) != 0) {
                lost.set(lane, 1);
                // nothing else to send: an empty batch carries the flag to the peers
                return send(lane, batch, free.poll());
            }
            if (!unconfirmed[lane].isEmpty() && clock.nanoTime() - lastBeat[lane] > BEAT_NANOS) {
                lastBeat[lane] = clock.nanoTime();
                return send(lane, batch, free.poll());
            }
            return null;
        }
        InFlight current = send(lane, batch, free.poll());
        if (previous != null) {
            free.add(settle(previous));
        }
        return current;
    }

    /**
     * What a lane does when a turn threw what nothing expected (a bug, or an {@link Error} such as running out of
     * memory while encoding): counts the turn's events as failed, marks the lane's next batch lost (the peers
     * resync what they missed) and logs it with its stack trace, at most once per interval.
     */
    private void lostUnexpectedly(int lane, List<ReplicationQueue.Entry> batch, Throwable unexpected) {
        lost.set(lane, 1);
        for (ReplicationQueue.Entry e : batch) {
            e.cache.onFailed();
            e.settleUnsent();
        }
        warn.error("lane", "ehrelay: replication of CacheManager " + metrics.cacheManagerName() + " met an "
                + "unexpected failure; " + batch.size() + " events counted as failed, the peers resync them",
                unexpected);
    }

    private ByteSink newBuffer() {
        int capacity = config.batchMaxBytes() + 1024;
        return transport.encodesOnHeap() ? new ByteSink(capacity) : ByteSink.direct(capacity);
    }

    /**
     * Encodes the batch into {@code buffer} (reused, so steady replication allocates nothing per event) and
     * hands the same bytes to every peer's transport.
     */
    private InFlight send(int lane, List<ReplicationQueue.Entry> batch, ByteSink buffer) {
        buffer.reset();
        if (refs[lane] != null) {
            refs[lane].clear(); // what a turn that threw left
        }
        buffer.write(EventCodec.batchHeader(0), 0, EventCodec.BATCH_HEADER_BYTES);
        List<ReplicationQueue.Entry> included = new ArrayList<>(batch.size());
        int[] starts = this.starts[lane];
        if (starts == null || starts.length < batch.size() + 1) {
            starts = new int[batch.size() + 1]; // grows to the largest batch the lane takes
            this.starts[lane] = starts;
        }
        // the queue depth is counted down once per run of events of one cache, not per event
        CacheMetrics run = null;
        int runEvents = 0;
        long runBytes = 0;
        try {
            for (ReplicationQueue.Entry e : batch) {
                if (e.cache != run) {
                    if (run != null) {
                        run.queueRemove(runEvents, runBytes);
                    }
                    run = e.cache;
                    runEvents = 0;
                    runBytes = 0;
                    run.servedByCurrentThread();
                }
                runEvents++;
                runBytes += e.size;
                encode(lane, e, buffer, starts, included);
            }
        } finally {
            if (run != null) {
                run.queueRemove(runEvents, runBytes);
            }
        }
        return sendEncoded(lane, buffer, starts, included);
    }

    /** Appends one event to the batch being built, or counts it in {@code unencodable} when it cannot be. */
    private void encode(int lane, ReplicationQueue.Entry e, ByteSink buffer, int[] starts,
                        List<ReplicationQueue.Entry> included) {
        starts[included.size()] = buffer.position();
        if (e.lostBefore) {
            lost.set(lane, 1);
        }
        if (e.bytes != null) {
            buffer.write(e.bytes, 0, e.bytes.length);
            included.add(e);
        } else {
            try {
                int valueHash = e.settle(); // before the event leaves: a peer holds the write only once settled
                int valueAt = EventCodec.writePut(buffer, e.cacheName, e.element, e.version.stamp, e.version.origin,
                        valueHash);
                if (valueAt >= 0 && refs[lane] != null) {
                    refs[lane].add(valueAt, (byte[]) e.element.getObjectValue());
                }
                included.add(e);
            } catch (IOException | RuntimeException ex) {
                buffer.truncate(starts[included.size()]);
                e.settleWithoutValue();
                e.cache.onUnencodable();
                lost.set(lane, 1);
                warn.warn("encode", "ehrelay: could not encode an event of CacheManager {} (counted in "
                        + "unencodable): {}",
                        metrics.cacheManagerName(), ex.toString());
            }
        }
    }

    private InFlight sendEncoded(int lane, ByteSink buffer, int[] starts, List<ReplicationQueue.Entry> included) {
        // every batch gets the lane's next number, addressed to anyone or not: a peer that was not addressed
        // (gone from the directory for a while) sees the gap when it is again
        int flags = lost.getAndSet(lane, 0) != 0 ? EventCodec.FLAG_LOST : 0;
        EventCodec.putBatchHeader(buffer, 0, included.size(), flags, streams[lane], seqs.incrementAndGet(lane));
        starts[included.size()] = buffer.position();
        List<Peer> targets = peers.get();
        Batch bytes = refs[lane] == null ? new Batch(buffer.batchView(), included.size())
                : refs[lane].batch(buffer.view(), included.size());
        if (targets.isEmpty()) {
            LOG.debug("no peers: {} events not addressed to anyone", included.size());
        } else {
            metrics.markBatch(included.size(), bytes.length());
        }
        List<Batch> perTarget = null;
        boolean[][] leftOut = null;
        List<String> names = null;
        for (int t = 0; t < targets.size(); t++) {
            String endpoint = targets.get(t).endpoint();
            if (!membership.removedAny(endpoint)) {
                continue;
            }
            if (names == null) {
                names = BatchRuns.cacheNames(included);
            }
            boolean[] out = membership.leaveOut(endpoint, names);
            if (out == null) {
                continue;
            }
            if (perTarget == null) {
                perTarget = new ArrayList<>(Collections.nCopies(targets.size(), bytes));
                leftOut = new boolean[targets.size()][];
            }
            perTarget.set(t, BatchRuns.without(buffer, starts, out, flags, streams[lane], seqs.get(lane)));
            leftOut[t] = out;
        }
        SendRound round = perTarget == null ? SendRound.start(transport, targets, bytes, false)
                : SendRound.start(transport, targets, perTarget, false);
        InFlight f = new InFlight(included, round, buffer.position(), buffer, lane, leftOut, perTarget);
        if (!included.isEmpty()) {
            long oldest = included.get(0).enqueuedNanos; // a lane is first in, first out
            for (Peer p : targets) {
                peerStats.sent(p.endpoint(), f, included.size(), f.bytes, oldest);
            }
        }
        return f;
    }

    /**
     * Waits for every peer to take the batch (up to {@code sendTimeoutMillis}) and counts each event as sent or
     * failed per peer. Returns the batch's buffer for reuse, or a fresh one when a send timed out (the transport
     * may still hold the old buffer then).
     */
    private ByteSink settle(InFlight f) throws InterruptedException {
        boolean[] reusable = {true};
        int[] target = {0};
        f.round.settle(config::sendTimeoutMillis, (peer, failure) -> {
            int t = target[0]++;
            boolean[] out = f.leftOut == null ? null : f.leftOut[t];
            peerStats.settled(peer.endpoint(), f, f.events.size(), f.bytes, failure == null);
            if (failure == null) {
                long now = clock.nanoTime();
                unconfirmed[f.lane].remove(peer.endpoint());
                membership.delivered(peer.endpoint());
                metrics.markBytesSent(f.perTarget == null ? f.bytes : f.perTarget.get(t).length());
                BatchRuns.countRuns(f.events, out, true, now);
                return;
            }
            reusable[0] &= !(failure instanceof TimeoutException);
            BatchRuns.countRuns(f.events, out, false, 0);
            unconfirmed[f.lane].add(peer.endpoint());
            membership.unreachable(peer.endpoint());
            undelivered.accept(peer);
            warn.warn("send:" + peer, "ehrelay: could not deliver {} events to peer {} of CacheManager {}: {}",
                    f.events.size(), peer, metrics.cacheManagerName(), SendRound.describe(failure));
        });
        return reusable[0] ? f.buffer : newBuffer();
    }

    /** Drains up to {@code drainMillis}, then interrupts; returns the number of events that could not be sent. */
    int stop(long drainMillis) {
        stopping = true;
        queue.close();
        long deadline = clock.nanoTime() + TimeUnit.MILLISECONDS.toNanos(drainMillis);
        for (Thread t : workers) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - clock.nanoTime());
            try {
                if (left > 0) {
                    t.join(left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        for (Thread t : workers) {
            t.interrupt();
        }
        for (Thread t : workers) {
            try {
                t.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        List<ReplicationQueue.Entry> left = queue.clear();
        long bytes = 0;
        for (ReplicationQueue.Entry e : left) {
            e.cache.queueRemove(e.size);
            e.cache.onDropped();
            bytes += e.size;
        }
        if (!left.isEmpty()) {
            LOG.warn("ehrelay: CacheManager {} shut down with {} events ({} bytes) not sent within "
                    + "shutdownDrainMillis={}; counted as dropped", metrics.cacheManagerName(), left.size(), bytes,
                    drainMillis);
        }
        return left.size();
    }
}
