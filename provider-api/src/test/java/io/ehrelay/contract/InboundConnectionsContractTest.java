package io.ehrelay.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The bound on the connections other processes hold open to a node ({@code maxInboundConnections}), which every
 * transport with a listener of its own meets by the one policy of {@code io.ehrelay.internal.InboundSlots}: never
 * more than the bound open, every connection turned away or replaced counted in {@code refusedConnections} and
 * closed by the node, and honest peers still get in. Run by each such transport module through one subclass.
 */
@Timeout(120)
public abstract class InboundConnectionsContractTest {

    /** The bound the suite's nodes have. */
    protected static final int BOUND = 4;
    private static final int FLOOD = 24;

    private final List<Socket> flood = new ArrayList<>();

    /** The transport's fixture, its nodes accepting at most {@code maxInboundConnections} connections. */
    protected abstract TransportFixture fixture(int maxInboundConnections);

    /** A port of {@code cm}'s node that peers connect to. */
    protected abstract int port(ContractCluster cluster, CacheManager cm) throws Exception;

    /**
     * Opens a connection to {@code port} that then says nothing more. By default it sends nothing at all: it
     * stays in its handshake, and the next newcomer takes its slot. A transport whose listener reads one
     * connection's handshake at a time (JGroups) sends its handshake first: a newcomer then takes the slot of
     * one only once it was silent for the transport's idle time (which the subclass shortens), and is refused
     * before.
     */
    protected Socket openSilent(int port) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        return s;
    }

    @AfterEach
    void closeFlood() throws IOException {
        for (Socket s : flood) {
            s.close();
        }
    }

    @Test
    void aFloodOfSilentConnections_neverHoldsMoreThanTheBound_countsEveryOneTurnedAway_andPeersStillGetIn()
            throws Exception {
        TransportFixture fixture = fixture(BOUND);
        try (ContractCluster cluster = new ContractCluster(fixture)) {
            CacheManager target = cluster.start("target");
            CacheManager honest = cluster.start("honest");
            replicates(honest, target, "before");
            Jmx jmx = cluster.jmx(target);
            long refusedBefore = jmx.managerCount("refusedConnections");
            int port = port(cluster, target);
            int peak = 0;
            int closed = 0;
            for (int i = 0; i < FLOOD; i++) {
                try {
                    flood.add(openSilent(port));
                } catch (IOException e) {
                    closed++; // closed by the node while its handshake was being written
                }
                peak = Math.max(peak, jmx.managerGauge("connectionsIn").intValue());
            }
            int turnedAway = FLOOD - BOUND;
            Await.until(Duration.ofSeconds(30), () -> jmx.managerCount("refusedConnections") - refusedBefore
                    >= turnedAway, () -> "refusedConnections +" + (jmx.managerCount("refusedConnections")
                    - refusedBefore) + ", expected at least " + turnedAway);
            for (Socket s : flood) {
                closed += closedByNode(s, 1000) ? 1 : 0;
            }
            System.out.printf("[%s] %d silent connections: connectionsIn peak %d (bound %d), refusedConnections "
                    + "+%d, closed by the node %d%n", fixture.transportName(), FLOOD, peak, BOUND,
                    jmx.managerCount("refusedConnections") - refusedBefore, closed);
            assertThat(peak).as("connections open at once").isLessThanOrEqualTo(BOUND);
            assertThat(closed).as("flood connections closed by the node").isGreaterThanOrEqualTo(turnedAway);
            // a node that joins now gets a slot: at once from a connection still in its handshake, else once one
            // of the flood has been silent for the idle time
            CacheManager late = cluster.start("late");
            replicates(target, late, "joined");
            replicates(late, target, "back");
            assertThat(jmx.managerGauge("connectionsIn").intValue()).isLessThanOrEqualTo(BOUND);
            replicates(honest, target, "after");
        }
    }

    /** A put on {@code from} arrives on {@code to} (waiting, while the senders reconnect). */
    private static void replicates(CacheManager from, CacheManager to, String key) {
        from.getCache("async").put(new Element(key, new byte[100]));
        Await.until(Duration.ofSeconds(40), () -> to.getCache("async").get(key) != null,
                () -> key + " did not arrive on " + to.getName());
    }

    /** Whether the node closed {@code s}: it reads end of stream (or a reset) within {@code millis}. */
    public static boolean closedByNode(Socket s, int millis) throws IOException {
        if (s.isClosed()) {
            return true;
        }
        s.setSoTimeout(millis);
        InputStream in = s.getInputStream();
        try {
            return in.read() == -1;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true;
        }
    }
}
