package io.ehrelay.rmi;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.ehrelay.internal.engine.RateLimitedLog;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connections peers hold open to one node, on all its listening sockets together (the registry, the relay
 * and the stock cache peers): at most {@code maxInboundConnections}. The JDK's RMI gives every accepted
 * connection a thread of its own for as long as it is open, and ehrelay's sockets a buffer, so this bounds both.
 * When every slot is taken, a newcomer gets the slot of
 * <ol>
 * <li>the oldest connection that has not finished its handshake (an honest RMI client sends its header as soon as
 *     it connects, so what still waits for one is most likely a connection that will never send it), else</li>
 * <li>the connection silent the longest, if silent for the idle timeout (one blocked writing a reply its peer
 *     does not read: RMI's reads time out by themselves);</li>
 * </ol>
 * otherwise the newcomer is closed at once. Either way one connection is turned away, counted in
 * {@code refusedConnections}. Each connection also has {@link #handshakeMillis} for its handshake and, once
 * established, may stay silent at most {@link #idleMillis} while RMI waits for its next call (see
 * {@link BufferedSockets.InboundSocket}). Thread-safe.
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

    private static final Logger LOG = LoggerFactory.getLogger(InboundConnections.class);

    private final int max;
    private final int handshake;
    private final int idle;
    private final TransportMetrics.Count refused;
    private final String node;
    private final Clock clock;
    private final RateLimitedLog warn;
    /** The open connections, oldest first; guarded by {@code this}. */
    private final LinkedHashSet<BufferedSockets.InboundSocket> open = new LinkedHashSet<>();
    private boolean closed;

    /**
     * @param max     {@code maxInboundConnections}
     * @param refused counts every connection turned away because all slots were taken
     * @param node    the CacheManager's name, for log lines
     * @param clock   the node's clock: handshake and idle times, the victim chosen
     */
    InboundConnections(int max, TransportMetrics.Count refused, String node, Clock clock) {
        this.clock = clock;
        this.warn = new RateLimitedLog(LOG, 10_000, clock);
        this.max = max;
        this.handshake = handshakeMillis;
        this.idle = idleMillis;
        this.refused = refused;
        this.node = node;
    }

    Clock clock() {
        return clock;
    }

    int handshakeMillis() {
        return handshake;
    }

    int idleMillis() {
        return idle;
    }

    int max() {
        return max;
    }

    /** The connections open now. */
    synchronized int size() {
        return open.size();
    }

    /**
     * Gives {@code s}, just accepted, a slot: a free one, else one taken from a connection still in its handshake
     * or silent for the idle timeout (which is closed). Returns {@code false} when there is none (the caller
     * closes {@code s}) or the node stopped.
     */
    boolean admit(BufferedSockets.InboundSocket s) {
        BufferedSockets.InboundSocket victim = null;
        long now = clock.nanoTime();
        synchronized (this) {
            if (closed) {
                return false;
            }
            if (open.size() >= max) {
                victim = victim(now);
                if (victim == null) {
                    refused.mark();
                    warn.warn("refused", "ehrelay: CacheManager {}: refusing an RMI connection from {}: "
                            + "maxInboundConnections={} are open, none still in its handshake or silent for {} s "
                            + "(counted in refusedConnections)", node, s.getInetAddress(), max, idle / 1000);
                    return false;
                }
                open.remove(victim);
            }
            open.add(s);
        }
        if (victim != null) {
            refused.mark();
            warn.warn("evicted", "ehrelay: CacheManager {}: maxInboundConnections={} reached: closed the RMI "
                    + "connection from {}, {} (counted in refusedConnections)", node, max, victim.getInetAddress(),
                    victim.inHandshake() ? "still in its handshake after "
                            + TimeUnit.NANOSECONDS.toMillis(now - victim.acceptedNanos()) + " ms"
                            : "silent for " + TimeUnit.NANOSECONDS.toSeconds(victim.silentNanos(now)) + " s");
            victim.closeQuietly();
            // so that RMI's thread of the victim takes the newcomer: threads stay within the bound under a flood
            victim.awaitRmiDone(EVICTION_WAIT_MILLIS);
        }
        return true;
    }

    /** The connection to close for a newcomer, or {@code null}; under the lock. */
    private BufferedSockets.InboundSocket victim(long now) {
        BufferedSockets.InboundSocket silentLongest = null;
        for (BufferedSockets.InboundSocket c : open) {
            if (c.inHandshake()) {
                return c; // the oldest: the set is in accept order
            }
            if (silentLongest == null || c.silentNanos(now) > silentLongest.silentNanos(now)) {
                silentLongest = c;
            }
        }
        if (silentLongest != null && silentLongest.silentNanos(now) >= TimeUnit.MILLISECONDS.toNanos(idle)) {
            return silentLongest;
        }
        return null;
    }

    /** {@code s} was closed: its slot is free. */
    synchronized void closed(BufferedSockets.InboundSocket s) {
        open.remove(s);
    }

    /** Closes every open connection and admits no more: the node stopped. */
    void closeAll() {
        List<BufferedSockets.InboundSocket> all;
        synchronized (this) {
            closed = true;
            all = new ArrayList<>(open);
            open.clear();
        }
        for (Iterator<BufferedSockets.InboundSocket> it = all.iterator(); it.hasNext();) {
            it.next().closeQuietly();
        }
    }
}
