package io.ehrelay.internal;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.ehrelay.spi.Clock;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * At most {@code maxInboundConnections} connections from peers, the one policy of every transport's listener: a
 * newcomer over the bound takes the slot of the oldest connection still in its handshake, else of the one silent
 * longest past the idle time, else is refused; counted in {@code refusedConnections}, said in a rate-limited WARN.
 * {@link #closeStalled} closes connections stopped mid-frame. Times: the node's {@link Clock}. Thread-safe;
 * connections are closed outside the lock.
 *
 * @param <C> the transport's connection
 */
public final class InboundSlots<C extends InboundSlots.Connection> {

    private static final Logger LOG = LoggerFactory.getLogger(InboundSlots.class);

    private final String transport;
    private final int max;
    private final long idleNanos;
    private final TransportMetrics.Count refused;
    private final String node;
    private final Clock clock;
    private final RateLimitedLog warn;
    /** The open connections, oldest first; guarded by {@code this}. */
    private final LinkedHashSet<C> open = new LinkedHashSet<>();
    private boolean closed;

    /**
     * @param transport  the transport's name, for log lines ("RMI", "JGroups", "TCP")
     * @param max        {@code maxInboundConnections}
     * @param idleMillis how long a connection must have been silent to give its slot up
     * @param refused    counts every connection turned away for a slot ({@code refusedConnections})
     * @param node       the CacheManager's name, for log lines
     * @param clock      the node's clock
     */
    public InboundSlots(String transport, int max, long idleMillis, TransportMetrics.Count refused, String node,
                        Clock clock) {
        if (max < 1) {
            throw new IllegalArgumentException("maxInboundConnections must be at least 1, was " + max);
        }
        this.transport = transport;
        this.max = max;
        this.idleNanos = TimeUnit.MILLISECONDS.toNanos(idleMillis);
        this.refused = refused;
        this.node = node;
        this.clock = clock;
        this.warn = new RateLimitedLog(LOG, 10_000, clock);
    }

    /** What the guard reads of an accepted connection, and how it closes one. */
    public interface Connection {
        /** When it was accepted, on the node's clock. */
        long acceptedNanos();

        /** When bytes last arrived from it (or, where the transport says so, last left), on the node's clock. */
        long lastActiveNanos();

        /** Whether it has not finished its handshake yet. */
        boolean inHandshake();

        /** Whether it stopped in the middle of a frame (what {@link #closeStalled} looks at). */
        boolean inFrame();

        /** Who it is from, for log lines. */
        String remote();

        /** Closes it to give its slot to a newcomer; called outside the guard's lock. */
        void evict();

        /** Closes it (stalled, or the node stops); called outside the guard's lock. */
        void closeQuietly();
    }

    public Clock clock() {
        return clock;
    }

    public int max() {
        return max;
    }

    /** The connections open now (gauge {@code connectionsIn}). */
    public synchronized int size() {
        return open.size();
    }

    /**
     * Gives {@code c}, just accepted, a slot: a free one, else the slot of a connection still in its handshake or
     * silent for the idle time (which is closed). Returns {@code false} when there is none, or the node stopped:
     * the caller then closes {@code c}.
     */
    public boolean admit(C c) {
        C victim;
        long now = clock.nanoTime();
        synchronized (this) {
            if (closed) {
                return false;
            }
            victim = open.size() >= max ? victim(now) : null;
            if (open.size() >= max && victim == null) {
                refused.mark();
                warn.warn("refused", "ehrelay: CacheManager {}: refusing an inbound {} connection from {}: "
                        + "maxInboundConnections={} are open, none still in its handshake or silent for {} s "
                        + "(counted in refusedConnections)", node, transport, c.remote(), max,
                        TimeUnit.NANOSECONDS.toSeconds(idleNanos));
                return false;
            }
            if (victim != null) {
                open.remove(victim);
            }
            open.add(c);
        }
        if (victim != null) {
            refused.mark();
            warn.warn("evicted", "ehrelay: CacheManager {}: maxInboundConnections={} reached: closed the {} "
                    + "connection from {}, {} (counted in refusedConnections)", node, max, transport, victim.remote(),
                    victim.inHandshake() ? "still in its handshake after "
                            + TimeUnit.NANOSECONDS.toMillis(now - victim.acceptedNanos()) + " ms"
                            : "silent for " + TimeUnit.NANOSECONDS.toSeconds(now - victim.lastActiveNanos()) + " s");
            victim.evict();
        }
        return true;
    }

    /** The connection to close for a newcomer, or {@code null}; under the lock. */
    private C victim(long now) {
        C silentLongest = null;
        for (C c : open) {
            if (c.inHandshake()) {
                return c; // the oldest: the set is in accept order
            }
            if (silentLongest == null || c.lastActiveNanos() < silentLongest.lastActiveNanos()) {
                silentLongest = c;
            }
        }
        return silentLongest != null && now - silentLongest.lastActiveNanos() >= idleNanos ? silentLongest : null;
    }

    /** {@code c} was closed: its slot is free. */
    public synchronized void closed(C c) {
        open.remove(c);
    }

    /**
     * Closes the connections that stopped sending in the middle of a frame for {@code stallMillis} (what they
     * hold of the receive budget goes back to the others), each said in a rate-limited WARN.
     *
     * @return how many were closed
     */
    public int closeStalled(long stallMillis) {
        long now = clock.nanoTime();
        long stall = TimeUnit.MILLISECONDS.toNanos(stallMillis);
        List<C> stalled = new ArrayList<>();
        synchronized (this) {
            for (C c : open) {
                if (c.inFrame() && now - c.lastActiveNanos() > stall) {
                    stalled.add(c);
                }
            }
        }
        for (C c : stalled) {
            warn.warn("stalled", "ehrelay: CacheManager {}: closing the {} connection from {}: nothing arrived for "
                    + "{} ms in the middle of a frame", node, transport, c.remote(), stallMillis);
            c.closeQuietly();
        }
        return stalled.size();
    }

    /** Closes every open connection and admits no more: the node stopped. */
    public void closeAll() {
        List<C> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(open);
            open.clear();
        }
        for (C c : all) {
            c.closeQuietly();
        }
    }
}
