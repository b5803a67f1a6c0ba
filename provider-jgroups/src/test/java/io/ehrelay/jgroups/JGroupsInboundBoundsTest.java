package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.InboundConnectionsContractTest;
import io.ehrelay.contract.Jmx;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.jgroups.BytesMessage;
import org.jgroups.Event;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.Version;
import org.jgroups.stack.IpAddress;
import org.jgroups.util.Util;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process that reaches a member's TCP port, member or not, can hold connections and make JGroups allocate the
 * message each one announces. {@link BoundedSocketFactory} bounds both per node: here 6 connections and 16 MB of
 * messages being read (the shipped stack's {@code max_length} is 8 MB), with the waits shortened. Honest members
 * keep replicating meanwhile.
 */
@Timeout(240)
class JGroupsInboundBoundsTest {

    private static final String BOUNDS = ", maxInboundConnections=6, inboundBufferMaxBytes=16m";

    private final List<Socket> attacker = new ArrayList<>();
    private int budgetWait;
    private int stall;
    private int idle;

    @BeforeEach
    void shortWaits() {
        budgetWait = BoundedSocketFactory.budgetWaitMillis;
        stall = BoundedSocketFactory.stallMillis;
        idle = BoundedSocketFactory.idleMillis;
        BoundedSocketFactory.budgetWaitMillis = 3_000;
        BoundedSocketFactory.stallMillis = 10_000;
        BoundedSocketFactory.idleMillis = 2_000;
    }

    @AfterEach
    void restore() throws IOException {
        for (Socket s : attacker) {
            s.close();
        }
        BoundedSocketFactory.budgetWaitMillis = budgetWait;
        BoundedSocketFactory.stallMillis = stall;
        BoundedSocketFactory.idleMillis = idle;
    }

    /** The port the node's transport listens on. */
    static int port(ContractCluster cluster, CacheManager cm) {
        JChannel ch = ((JGroupsTransport) cluster.node(cm).transport()).channel();
        return ((IpAddress) ch.down(new Event(Event.GET_PHYSICAL_ADDRESS, ch.getAddress()))).getPort();
    }

    /** A connection past JGroups' header, claiming to be 127.0.0.1:{@code claimedPort} (not a member). */
    private Socket connect(int port, int claimedPort) throws Exception {
        Socket s = new Socket();
        attacker.add(s);
        return pastHeader(s, port, claimedPort);
    }

    /** Connects {@code s} to {@code port} and sends JGroups' connection header, as 127.0.0.1:{@code claimedPort}. */
    static Socket pastHeader(Socket s, int port, int claimedPort) throws IOException {
        s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        IpAddress claimed = new IpAddress("127.0.0.1", claimedPort);
        out.write(new byte[] {'b', 'e', 'l', 'a'});
        out.writeShort(Version.version);
        out.writeShort(claimed.serializedSize());
        claimed.writeTo(out);
        out.flush();
        return s;
    }

    private static void stillReplicating(CacheManager from, CacheManager to, String key, int bytes) {
        from.getCache("async").put(new Element(key, new byte[bytes]));
        Await.until(() -> to.getCache("async").get(key) != null, () -> key + " did not arrive");
    }

    /**
     * A JGroups frame as a member's transport writes it (its length, then the message: version, flags, type,
     * addresses, headers, the payload's length and bytes), for a message carrying {@code payload} bytes.
     */
    private static byte[] frame(int payload) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(payload + 256);
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0); // the frame's length, below
        Util.writeMessage(new BytesMessage(null, new byte[payload]), out, true);
        byte[] f = bytes.toByteArray();
        ByteBuffer.wrap(f).putInt(0, f.length - 4);
        return f;
    }

    /** Writes {@code bytes} on a thread of its own (the node may stop reading): the writer, to join. */
    private static Thread write(Socket s, byte[] bytes, int off, int len) {
        Thread t = new Thread(() -> {
            try {
                s.getOutputStream().write(bytes, off, len);
                s.getOutputStream().flush();
            } catch (IOException e) {
                // closed by the node
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Test
    void partialPayloads_holdAtMostTheBudget_theRestAreClosed_andTheBudgetComesBack() throws Exception {
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.tcp(BOUNDS))) {
            CacheManager node = cluster.start("target");
            CacheManager honest = cluster.start("honest");
            stillReplicating(honest, node, "before", 10);
            Jmx jmx = cluster.jmx(node);
            long rejected = jmx.managerCount("rejected");
            AtomicLong peak = new AtomicLong();
            Thread watch = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    peak.accumulateAndGet(jmx.managerGauge("inboundBufferBytes").longValue(), Math::max);
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            watch.start();
            // 5 connections (with the honest member's, 6: the bound) each send a well-formed frame of a message whose
            // payload is 7 MB, and stop 6 MB short of its end: each frame is read whole before JGroups parses it,
            // and 2 fit in 16 MB
            int port = port(cluster, node);
            byte[] message = frame(7 << 20);
            List<Socket> stalled = new ArrayList<>();
            long sent = System.nanoTime();
            for (int i = 0; i < 5; i++) {
                Socket s = connect(port, 1000 + i);
                write(s, message, 0, message.length - (6 << 20));
                stalled.add(s);
            }
            // the three without room are closed after the 3 s wait, counted in rejected; they wait side by side,
            // each on its connection's thread
            Await.until(() -> jmx.managerCount("rejected") - rejected >= 3,
                    () -> "rejected +" + (jmx.managerCount("rejected") - rejected));
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
            assertThat(jmx.managerGauge("inboundBufferBytes").longValue()).as("bytes held by 2 of 5 frames")
                    .isEqualTo(2L * (message.length - 4));
            // small puts replicate while the budget is taken
            for (int i = 0; i < 20; i++) {
                stillReplicating(honest, node, "during-" + i, 1000);
            }
            // the two holding their share stop in the middle: closed after 10 s, and their share comes back
            Await.until(() -> jmx.managerCount("rejected") - rejected == 5,
                    () -> "rejected +" + (jmx.managerCount("rejected") - rejected));
            Await.until(() -> jmx.managerGauge("inboundBufferBytes").longValue() == 0,
                    () -> "budget still in use: " + jmx.managerGauge("inboundBufferBytes"));
            watch.interrupt();
            watch.join();
            int closed = 0;
            for (Socket s : stalled) {
                closed += InboundConnectionsContractTest.closedByNode(s, 2000) ? 1 : 0;
            }
            System.out.printf("[jgroups] 5 partial 7 MB frames: peak inboundBufferBytes %d KiB (bound 16 MiB), "
                    + "3 without room closed after %d ms, rejected +%d, closed by the node %d%n", peak.get() >> 10,
                    waited, jmx.managerCount("rejected") - rejected, closed);
            assertThat(waited).as("ms until the three without room were closed").isLessThan(9_000);
            assertThat(closed).as("attacker connections the node closed").isEqualTo(5);
            // a 3 MB value (a payload over 64 KiB, charged) still arrives
            stillReplicating(honest, node, "after", 3 << 20);
        }
    }

    /**
     * Sends {@code frame} on a new connection to a node and checks that the node closes it, counts it in
     * {@code rejected}, holds nothing of it, and still replicates.
     */
    private void refusedBeforeJGroupsAllocates(byte[] frame) throws Exception {
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.tcp(", inboundBufferMaxBytes=16m"))) {
            CacheManager node = cluster.start("target");
            CacheManager honest = cluster.start("honest");
            Jmx jmx = cluster.jmx(node);
            long rejected = jmx.managerCount("rejected");
            Socket s = connect(port(cluster, node), 2000);
            s.getOutputStream().write(frame);
            s.getOutputStream().flush();
            assertThat(InboundConnectionsContractTest.closedByNode(s, 5000)).as("closed by the node").isTrue();
            Await.until(() -> jmx.managerCount("rejected") - rejected == 1,
                    () -> "rejected +" + (jmx.managerCount("rejected") - rejected));
            assertThat(jmx.managerGauge("inboundBufferBytes").longValue()).isZero();
            stillReplicating(honest, node, "after", 1000);
        }
    }

    @Test
    void aPayloadLengthBeyondMaxLength_closesItsConnectionBeforeJGroupsAllocates() throws Exception {
        // a 16-byte message whose payload length says 1 GB: the frame is small, JGroups would allocate 1 GB
        byte[] message = frame(16);
        ByteBuffer.wrap(message).putInt(message.length - 16 - 4, 1 << 30);
        refusedBeforeJGroupsAllocates(message);
    }

    @Test
    void aBatchCountingMoreMessagesThanItsFrameHolds_closesItsConnectionBeforeJGroupsAllocates() throws Exception {
        // a batch of two small messages whose count says 100 million: JGroups would allocate an array of
        // 100 million references (400-800 MB) after the first message
        IpAddress src = new IpAddress("127.0.0.1", 2001);
        byte[] clusterName = "x".getBytes(StandardCharsets.US_ASCII);
        ByteArrayOutputStream header = new ByteArrayOutputStream();
        Util.writeMessageListHeader(null, src, clusterName, 2, new DataOutputStream(header), true);
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0);
        List<Message> two = Arrays.asList(
                new BytesMessage(null, new byte[8]), new BytesMessage(null, new byte[8]));
        Util.writeMessageList(null, src, clusterName, two, out, true);
        byte[] batch = bytes.toByteArray();
        ByteBuffer.wrap(batch).putInt(0, batch.length - 4).putInt(4 + header.size() - 4, 100_000_000);
        refusedBeforeJGroupsAllocates(batch);
    }

    @Test
    void settings_budgetBelowMaxLength_isRefusedAtStart() {
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.tcp(", inboundBufferMaxBytes=4m"))) {
            assertThatThrownBy(() -> cluster.start("small"))
                    .hasStackTraceContaining("inboundBufferMaxBytes (4194304 bytes) must be at least the transport's "
                            + "max_length (8000000 bytes)");
        }
    }
}
