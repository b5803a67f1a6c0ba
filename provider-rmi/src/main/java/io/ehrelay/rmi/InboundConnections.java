package io.ehrelay.rmi;

import io.ehrelay.internal.InboundSlots;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.TransportMetrics;

/**
 * The connections peers hold open to one node, on all its listening sockets together: at most
 * {@code maxInboundConnections} by {@link InboundSlots}' policy, which bounds RMI's thread per connection and
 * ehrelay's buffers. A connection is in its handshake until RMI read a valid JRMP header (with TLS: the TLS
 * handshake), with {@link #handshakeMillis} for it, then silent at most {@link #idleMillis} between calls (see
 * {@link BufferedSockets.InboundSocket}; docs/rmi.md, "Connections and memory"). Thread-safe.
 */
final class InboundConnections {

    /** How long a new connection has for its handshake (with TLS the TLS handshake, else the JRMP header). */
    static volatile int handshakeMillis = 10_000;
    /**
     * How long an established connection may stay silent while RMI waits for its next call; also how long a
     * connection must have been silent to give up its slot when all are taken. RMI clients drop pooled
     * connections idle for 15 s ({@code sun.rmi.transport.connectionTimeout}) and ping one before reusing it,
     * so honest peers never lose a call to it. Tests shorten it.
     */
    static volatile int idleMillis = 60_000;

    /** How long an eviction waits for RMI to let go of the connection it closed (a flood waits with it). */
    static final long EVICTION_WAIT_MILLIS = 50;

    private final int handshake;
    private final int idle;
    private final InboundSlots<BufferedSockets.InboundSocket> slots;

    /**
     * @param max     {@code maxInboundConnections}
     * @param refused counts every connection turned away because all slots were taken
     * @param node    the CacheManager's name, for log lines
     * @param clock   the node's clock: handshake and idle times, the victim chosen
     */
    InboundConnections(int max, TransportMetrics.Count refused, String node, Clock clock) {
        this.handshake = handshakeMillis;
        this.idle = idleMillis;
        this.slots = new InboundSlots<>("RMI", max, idle, refused, node, clock);
    }

    Clock clock() {
        return slots.clock();
    }

    int handshakeMillis() {
        return handshake;
    }

    int idleMillis() {
        return idle;
    }

    int max() {
        return slots.max();
    }

    /** The connections open now. */
    int size() {
        return slots.size();
    }

    /**
     * Gives {@code s}, just accepted, a slot (see {@link InboundSlots#admit}). Returns {@code false} when there is
     * none (the caller closes {@code s}) or the node stopped.
     */
    boolean admit(BufferedSockets.InboundSocket s) {
        return slots.admit(s);
    }

    /** {@code s} was closed: its slot is free. */
    void closed(BufferedSockets.InboundSocket s) {
        slots.closed(s);
    }

    /** Closes every open connection and admits no more: the node stopped. */
    void closeAll() {
        slots.closeAll();
    }
}
