package io.ehrelay.internal.engine;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;

import io.ehrelay.config.OverflowPolicy;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.Clock;
import net.sf.ehcache.Element;

/**
 * One CacheManager's asynchronous replication queue: bounded in bytes and events, in lanes (one per dispatcher
 * thread; a cache always in the same lane, so its events stay in order). When full, {@link OverflowPolicy#DROP}
 * refuses at once, {@link OverflowPolicy#BLOCK} waits up to its timeout while the lane is being drained (until its lane
 * is an eighth of the bounds emptier than when it began waiting, or at least has room when the time is up); the caller
 * counts a refusal. {@link #close()} stops accepting and wakes every waiter; then {@link #take} drains or
 * {@link #clear} discards. Thread-safe.
 */
final class ReplicationQueue {

    private final long maxBytes;
    private final int maxEvents;
    /** Per lane: the bytes it holds (its events are {@code lanes[i].size()}). */
    private final long[] laneBytes;
    /**
     * Per lane, while writers wait for room: the lane's bytes, or its events, at or below which the first of them
     * goes on ({@code -1}: nobody waits); {@link #take} wakes them only then.
     */
    private final long[] wakeBytes;
    private final int[] wakeEvents;
    /** Writers whose lane is drained enough and who wait only for room (another lane holds the queue). */
    private int roomWaiters;
    private final OverflowPolicy policy;
    private final long blockNanos;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition spaceAvailable = lock.newCondition();
    private final ArrayDeque<Entry>[] lanes;
    private final Condition[] notEmpty;
    private long bytes;
    private int events;
    private long highWaterBytes;
    private int highWaterEvents;
    private boolean closed;
    /**
     * Per lane, when its dispatcher last took events: a writer waits for room only while its own lane is being
     * drained (a lane stuck on a peer must not fill the queue with what the others free).
     */
    private final long[] lastTakeNanos;
    /** Per lane: an event was refused; the next accepted one is marked {@link Entry#lostBefore}. */
    private final boolean[] lostPending;

    /**
     * Told how long a writer waited for room ({@link OverflowPolicy#BLOCK}), in nanoseconds, whether room came
     * or not; called on the writer's thread, outside the queue's lock.
     */
    private volatile LongConsumer onWait = n -> { };
    /** The block window's clock: how long since a lane's dispatcher last took events. */
    private final Clock clock;

    @SuppressWarnings("unchecked")
    ReplicationQueue(int laneCount, long maxBytes, int maxEvents, OverflowPolicy policy, long blockMillis,
                     Clock clock) {
        this.clock = clock;
        this.maxBytes = maxBytes;
        this.maxEvents = maxEvents;
        this.policy = policy;
        this.blockNanos = TimeUnit.MILLISECONDS.toNanos(blockMillis);
        @SuppressWarnings({"unchecked", "rawtypes"})
        ArrayDeque<Entry>[] empty = new ArrayDeque[laneCount];
        lanes = empty;
        lastTakeNanos = new long[laneCount];
        Arrays.fill(lastTakeNanos, clock.nanoTime());
        lostPending = new boolean[laneCount];
        laneBytes = new long[laneCount];
        wakeBytes = new long[laneCount];
        wakeEvents = new int[laneCount];
        Arrays.fill(wakeBytes, -1);
        Arrays.fill(wakeEvents, -1);
        notEmpty = new Condition[laneCount];
        for (int i = 0; i < laneCount; i++) {
            lanes[i] = new ArrayDeque<>();
            notEmpty[i] = lock.newCondition();
        }
    }

    /**
     * One event waiting to be sent: already encoded ({@code bytes}), or a put whose element has fast-path key and
     * value types and is encoded by the dispatcher straight into the batch ({@code element}); {@code size} is the
     * exact encoded size either way, which is what the byte bound counts.
     */
    static final class Entry {
        final CacheMetrics cache;
        final byte[] bytes;
        final Element element;
        final byte[] cacheName;
        final int size;
        final long enqueuedNanos;
        /** Events of this lane were refused just before this one: its batch tells the peers (FLAG_LOST). */
        boolean lostBefore;

        /**
         * A fast-path put: its version, whose stamp and origin the dispatcher writes with the element; when
         * {@linkplain Version#pending() pending}, settled in {@code versions} with the value's hash before the event
         * is written. Null for an encoded event.
         */
        final Version version;
        final VersionTable versions;

        Entry(CacheMetrics cache, byte[] bytes, long enqueuedNanos) {
            this.cache = cache;
            this.bytes = bytes;
            this.element = null;
            this.cacheName = null;
            this.size = bytes.length;
            this.enqueuedNanos = enqueuedNanos;
            this.version = null;
            this.versions = null;
        }

        /** A fast-path put with its version (pending: the dispatcher hashes the value). */
        Entry(CacheMetrics cache, byte[] cacheName, Element element, int size, long enqueuedNanos, Version version,
              VersionTable versions) {
            this.cache = cache;
            this.bytes = null;
            this.element = element;
            this.cacheName = cacheName;
            this.size = size;
            this.enqueuedNanos = enqueuedNanos;
            this.version = version;
            this.versions = versions;
        }

        /**
         * A pending version gets its value hash (read from the element's value, what the event carries): by the
         * dispatcher before it writes the event, or by the writer when the queue refuses it. Returns the hash; a
         * version settled already is not hashed again.
         */
        int settle() throws IOException {
            if (!version.pending()) {
                return version.valueHash;
            }
            int hash = EventCodec.hashOf(element.getObjectValue());
            versions.settle(element.getObjectKey(), version, hash);
            return hash;
        }

        /** A pending version whose value cannot be hashed becomes one without value: served as an invalidation. */
        void settleWithoutValue() {
            if (version != null) {
                versions.settle(element.getObjectKey(), version, 0); // nothing when settled already
            }
        }

        /**
         * For an event that will not be written (refused by the queue, or in a turn that failed): its pending
         * version is settled all the same, so that the peers' resync from this node serves it.
         */
        void settleUnsent() {
            if (version == null) {
                return;
            }
            try {
                settle();
            } catch (IOException | RuntimeException e) {
                settleWithoutValue();
            }
        }
    }

    int laneCount() {
        return lanes.length;
    }

    void onWait(LongConsumer listener) {
        this.onWait = listener;
    }

    /** Adds an event; returns {@code false} when it was refused (full, or closed). */
    boolean offer(int lane, Entry e) throws InterruptedException {
        int size = e.size;
        if (size > maxBytes) {
            return false;
        }
        long waited = 0;
        lock.lock();
        try {
            if (!hasRoom(size) && policy == OverflowPolicy.BLOCK && !closed
                    && clock.nanoTime() - lastTakeNanos[lane] < blockNanos) {
                // the lane's dispatcher took events within the wait's length: room is coming (a bulk load
                // outrunning it). When it has taken nothing for that long (a peer not taking batches), writers
                // do not wait at all: each would wait the full time for nothing.
                //
                // The writer goes on once its lane is an eighth of the bounds emptier than now (or empty), not as
                // soon as one event fits: it then writes a run of events without waiting again, where waking for
                // every batch taken cost a wait and a wake-up per batch on both threads. Writers wait as long in
                // all (the peers set the pace); when the time is up, room for the event is enough
                long start = clock.nanoTime();
                long left = blockNanos;
                long untilBytes = Math.max(0, laneBytes[lane] - maxBytes / 8);
                int untilEvents = Math.max(0, lanes[lane].size() - maxEvents / 8);
                while (left > 0 && !closed) {
                    boolean laneDrained = laneBytes[lane] <= untilBytes || lanes[lane].size() <= untilEvents;
                    if (laneDrained && hasRoom(size)) {
                        break;
                    }
                    if (laneDrained) {
                        roomWaiters++; // room comes from another lane's take: every take wakes it
                    } else {
                        wakeBytes[lane] = Math.max(wakeBytes[lane], untilBytes);
                        wakeEvents[lane] = Math.max(wakeEvents[lane], untilEvents);
                    }
                    try {
                        left = spaceAvailable.awaitNanos(left);
                    } finally {
                        if (laneDrained) {
                            roomWaiters--;
                        }
                    }
                }
                waited = Math.max(1, clock.nanoTime() - start);
            }
            if (closed || !hasRoom(size)) {
                lostPending[lane] = true;
                return false;
            }
            if (lostPending[lane]) {
                e.lostBefore = true;
                lostPending[lane] = false;
            }
            lanes[lane].addLast(e);
            laneBytes[lane] += size;
            bytes += size;
            events++;
            if (bytes > highWaterBytes) {
                highWaterBytes = bytes;
            }
            if (events > highWaterEvents) {
                highWaterEvents = events;
            }
            notEmpty[lane].signal();
            return true;
        } finally {
            lock.unlock();
            if (waited > 0) {
                onWait.accept(waited);
            }
        }
    }

    /**
     * Whether an event of the lane was refused and nothing was queued after it (so no batch will carry the
     * loss); clears it. Everything queued before the refusal has been taken when the lane is empty.
     */
    boolean takeLostIfEmpty(int lane) {
        lock.lock();
        try {
            if (lostPending[lane] && lanes[lane].isEmpty()) {
                lostPending[lane] = false;
                return true;
            }
            return false;
        } finally {
            lock.unlock();
        }
    }

    private boolean hasRoom(int size) {
        return events < maxEvents && bytes + size <= maxBytes;
    }

    /**
     * Takes a batch from a lane: waits up to {@code waitNanos} for a first event, then up to {@code lingerNanos}
     * for the batch to fill; stops at {@code maxEvents} events or when adding the next event would pass
     * {@code maxBytes} (a first event larger than that still makes a batch of one). Returns an empty list when
     * nothing came.
     */
    List<Entry> take(int lane, int maxCount, long maxBatchBytes, long lingerNanos, long waitNanos)
            throws InterruptedException {
        ArrayDeque<Entry> q = lanes[lane];
        lock.lock();
        try {
            long left = waitNanos;
            while (q.isEmpty() && left > 0 && !closed) {
                left = notEmpty[lane].awaitNanos(left);
            }
            if (q.isEmpty()) {
                return Collections.emptyList();
            }
            if (lingerNanos > 0 && !closed) {
                long lingerLeft = lingerNanos;
                while (q.size() < maxCount && lingerLeft > 0 && !closed) {
                    lingerLeft = notEmpty[lane].awaitNanos(lingerLeft);
                }
            }
            List<Entry> out = new ArrayList<>(Math.min(q.size(), maxCount));
            long taken = 0;
            while (!q.isEmpty() && out.size() < maxCount) {
                Entry e = q.peekFirst();
                if (!out.isEmpty() && taken + e.size > maxBatchBytes) {
                    break;
                }
                q.pollFirst();
                out.add(e);
                taken += e.size;
            }
            bytes -= taken;
            laneBytes[lane] -= taken;
            events -= out.size();
            lastTakeNanos[lane] = clock.nanoTime();
            if (roomWaiters > 0 || laneBytes[lane] <= wakeBytes[lane] || q.size() <= wakeEvents[lane]) {
                wakeBytes[lane] = -1; // those who wait longer say so again
                wakeEvents[lane] = -1;
                spaceAvailable.signalAll();
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    /** Stops accepting events and wakes every waiting writer and dispatcher. */
    void close() {
        lock.lock();
        try {
            closed = true;
            spaceAvailable.signalAll();
            for (Condition c : notEmpty) {
                c.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** The enqueue time (nanoTime) of the oldest event queued, or {@link Long#MAX_VALUE} when empty. */
    long oldestEnqueuedNanos() {
        lock.lock();
        try {
            long oldest = 0;
            boolean any = false;
            for (ArrayDeque<Entry> lane : lanes) {
                Entry e = lane.peekFirst();
                if (e != null && (!any || e.enqueuedNanos - oldest < 0)) {
                    oldest = e.enqueuedNanos;
                    any = true;
                }
            }
            return any ? oldest : Long.MAX_VALUE;
        } finally {
            lock.unlock();
        }
    }

    /** Removes and returns everything still queued (after {@link #close()}, for counting what is lost). */
    List<Entry> clear() {
        lock.lock();
        try {
            List<Entry> out = new ArrayList<>(events);
            for (ArrayDeque<Entry> q : lanes) {
                out.addAll(q);
                q.clear();
            }
            bytes = 0;
            events = 0;
            Arrays.fill(laneBytes, 0);
            spaceAvailable.signalAll();
            return out;
        } finally {
            lock.unlock();
        }
    }

    long highWaterBytes() {
        lock.lock();
        try {
            return highWaterBytes;
        } finally {
            lock.unlock();
        }
    }

    int highWaterEvents() {
        lock.lock();
        try {
            return highWaterEvents;
        } finally {
            lock.unlock();
        }
    }
}
