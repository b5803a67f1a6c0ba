package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.rmi.Remote;
import java.rmi.registry.LocateRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import io.ehrelay.contract.TestKeyStores;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a peer can make an RMI node hold: at most {@code maxInboundConnections} connections on all its listening
 * sockets together (so as many of the JDK's connection threads), little heap per connection, a handshake deadline
 * and an idle timeout; honest replication goes on while the bound is hit, and everything recovers after.
 */
@Timeout(120)
class RmiConnectionBoundsTest {

    private static final int ATTACK = 2000;
    private static final Pattern ENDPOINT_PORT = Pattern.compile("endpoint:\\[[^\\]]*?:(\\d+)[,\\]]");

    private ContractCluster cluster;
    private final List<Socket> attackers = new ArrayList<>();

    @AfterEach
    void tearDown() {
        closeAttackers();
        if (cluster != null) {
            cluster.close();
        }
        InboundConnections.handshakeMillis = 10_000;
        InboundConnections.idleMillis = 60_000;
    }

    private void closeAttackers() {
        for (Socket s : attackers) {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
        attackers.clear();
    }

    static RmiTransport transport(CacheManager cm) {
        return (RmiTransport) ReplicationNode.find(cm, RmiSettings.SCHEME).transport();
    }

    /** The port of the node's relay, as its stub names it. */
    private static int relayPort(String endpoint) throws Exception {
        Remote relay = LocateRegistry.getRegistry(RmiUrls.host(endpoint), RmiUrls.port(endpoint))
                .lookup(RelayRemote.BINDING);
        Matcher m = ENDPOINT_PORT.matcher(relay.toString());
        assertThat(m.find()).as("a port in %s", relay).isTrue();
        return Integer.parseInt(m.group(1));
    }

    /** The JDK's RMI connection threads of this JVM (busy ones and idle ones waiting for the next connection). */
    private static int rmiConnectionThreads(boolean busyOnly) {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] all = new Thread[root.activeCount() + 256];
        int n = root.enumerate(all, true);
        int count = 0;
        for (int i = 0; i < n; i++) {
            String name = all[i].getName();
            if (name.contains("RMI TCP Connection") && !(busyOnly && name.contains("(idle)"))) {
                count++;
            }
        }
        return count;
    }

    private static long heapAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /** Opens {@code n} connections that never send a byte, alternating between the ports; returns how many failed. */
    private int openIdleConnections(int n, int... ports) throws IOException {
        int failed = 0;
        for (int i = 0; i < n; i++) {
            Socket s = new Socket();
            try {
                s.connect(new InetSocketAddress("127.0.0.1", ports[i % ports.length]), 2000);
                attackers.add(s);
            } catch (IOException e) {
                failed++;
                s.close();
            }
        }
        return failed;
    }

    @Test
    void twoThousandIdleConnections_holdAtMostTheBound_andHonestReplicationGoesOn() throws Exception {
        // longer than the attack takes on a loaded machine: an attacker's connection the node closes at its
        // handshake deadline frees a slot without being refused, and the count of refusals below would fall short
        // (it did in CI, 10 short, when the 2,000 connections took longer than a 3 s deadline); the attackers are
        // closed at the end, so their connections end with them
        InboundConnections.handshakeMillis = 60_000;
        cluster = new ContractCluster(RmiContractTest.FIXTURE);
        CacheManager a = cluster.start("a");
        CacheManager b = cluster.start("b");
        String endpoint = cluster.endpoint(a);
        int registryPort = RmiUrls.port(endpoint);
        int relayPort = relayPort(endpoint);
        assertThat(transport(a).listeningPorts()).contains(registryPort, relayPort);
        Jmx jmx = cluster.jmx(a);
        assertThat(jmx.managerCount("refusedConnections")).as("registered at start").isZero();
        b.getCache("async").put(new Element("warm", "up"));
        a.getCache("async").put(new Element("warm-back", "up"));
        Await.until(() -> a.getCache("async").get("warm") != null && b.getCache("async").get("warm-back") != null,
                () -> "replication before the attack");

        int threadsBefore = rmiConnectionThreads(false);
        int busyBefore = rmiConnectionThreads(true);
        long heapBefore = heapAfterGc();
        AtomicBoolean attacking = new AtomicBoolean(true);
        AtomicInteger peakThreads = new AtomicInteger(threadsBefore);
        AtomicInteger honestPuts = new AtomicInteger();
        Thread sampler = new Thread(() -> {
            while (attacking.get()) {
                peakThreads.accumulateAndGet(rmiConnectionThreads(false), Math::max);
                sleep(5);
            }
        }, "thread-sampler");
        Thread putter = new Thread(() -> {
            for (int i = 0; i < 5000 && attacking.get(); i++) {
                b.getCache("async").put(new Element("during-" + i, i));
                honestPuts.incrementAndGet();
                sleep(20);
            }
        }, "honest-putter");
        sampler.start();
        putter.start();
        long started = System.nanoTime();
        int failed = openIdleConnections(ATTACK, registryPort, relayPort);
        long attackMillis = (System.nanoTime() - started) / 1_000_000;
        int openDuring = transport(a).inboundConnections();
        long heapDuring = heapAfterGc();
        // an honest put still arrives while the attackers hold their connections
        b.getCache("async").put(new Element("while-held", "v"));
        Await.until(Duration.ofSeconds(10), () -> a.getCache("async").get("while-held") != null,
                () -> "an honest put while the attackers hold every slot");
        attacking.set(false);
        sampler.join();
        putter.join();
        // the node accepts behind the attacker (the kernel completes connections into the listen backlog)
        Await.until(() -> jmx.managerCount("refusedConnections") >= ATTACK - failed - 64,
                () -> "refusedConnections " + jmx.managerCount("refusedConnections"));
        long refused = jmx.managerCount("refusedConnections");
        System.out.printf("[rmi] %d idle connections (%d failed to connect) in %d ms: %d open at the node "
                        + "(maxInboundConnections=64), refusedConnections=%d; RMI connection threads %d before, "
                        + "peak %d; heap after GC %d KiB before, %d KiB with the connections open; %d honest puts%n",
                ATTACK, failed, attackMillis, openDuring, refused, threadsBefore, peakThreads.get(),
                heapBefore >> 10, heapDuring >> 10, honestPuts.get());

        assertThat(openDuring).as("connections open at the node").isLessThanOrEqualTo(64);
        assertThat(peakThreads.get() - threadsBefore).as("RMI connection threads added").isLessThanOrEqualTo(64 + 12);
        assertThat(heapDuring - heapBefore).as("heap held with the connections open").isLessThan(12L << 20);
        int puts = honestPuts.get();
        assertThat(puts).isPositive();
        Await.until(() -> {
            for (int i = 0; i < puts; i++) {
                if (a.getCache("async").get("during-" + i) == null) {
                    return false;
                }
            }
            return true;
        }, () -> "honest puts made during the attack arrived");

        // after the attack: the node frees everything and serves new connections
        closeAttackers();
        Await.until(() -> transport(a).inboundConnections() <= 4,
                () -> "connections still open: " + transport(a).inboundConnections());
        Await.until(() -> rmiConnectionThreads(true) <= busyBefore + 2,
                () -> "busy RMI connection threads: " + rmiConnectionThreads(true) + ", before " + busyBefore);
        assertThat(LocateRegistry.getRegistry("127.0.0.1", registryPort).list()).contains(RelayRemote.BINDING);
        b.getCache("sync").put(new Element("after", "v"));
        assertThat(a.getCache("sync").get("after")).isNotNull();
        a.getCache("async").put(new Element("back", "v"));
        Await.until(() -> b.getCache("async").get("back") != null, () -> "replication to b after the attack");
    }

    @Test
    void silentConnectionsAreClosed_byTheHandshakeDeadlineOrTheIdleTimeout_andHonestPeersCarryOnAfterPauses()
            throws Exception {
        InboundConnections.handshakeMillis = 500;
        InboundConnections.idleMillis = 1500;
        cluster = new ContractCluster(RmiContractTest.FIXTURE);
        CacheManager a = cluster.start("a");
        CacheManager b = cluster.start("b");
        int registryPort = RmiUrls.port(cluster.endpoint(a));

        // a connection that never speaks is closed at its handshake deadline
        try (Socket silent = new Socket()) {
            silent.connect(new InetSocketAddress("127.0.0.1", registryPort), 2000);
            long start = System.nanoTime();
            assertThat(closedByNode(silent)).isTrue();
            assertThat((System.nanoTime() - start) / 1_000_000).as("ms until closed").isBetween(300L, 1400L);
        }
        // one that shook hands (the JRMP header) and then waits is closed after the idle timeout
        try (Socket idle = new Socket()) {
            idle.connect(new InetSocketAddress("127.0.0.1", registryPort), 2000);
            DataOutputStream out = new DataOutputStream(idle.getOutputStream());
            out.writeInt(0x4a524d49); // "JRMI"
            out.writeShort(2);
            out.writeByte(0x4b); // stream protocol
            out.flush();
            DataInputStream in = new DataInputStream(idle.getInputStream());
            idle.setSoTimeout(5000);
            assertThat(in.readByte()).as("protocol ack").isEqualTo((byte) 0x4e);
            in.readUTF();
            in.readInt();
            out.writeUTF("127.0.0.1");
            out.writeInt(0);
            out.flush();
            long start = System.nanoTime();
            assertThat(closedByNode(idle)).isTrue();
            assertThat((System.nanoTime() - start) / 1_000_000).as("ms until closed").isBetween(1200L, 2900L);
        }

        // honest peers: their pooled connections are closed while they pause, and they just open new ones
        for (int round = 0; round < 3; round++) {
            b.getCache("async").put(new Element("async-" + round, "v"));
            b.getCache("sync").put(new Element("sync-" + round, "v"));
            a.getCache("sync").put(new Element("back-" + round, "v"));
            int r = round;
            Await.until(() -> a.getCache("async").get("async-" + r) != null, () -> "async put after a pause");
            assertThat(a.getCache("sync").get("sync-" + r)).isNotNull();
            assertThat(b.getCache("sync").get("back-" + r)).isNotNull();
            Await.until(Duration.ofSeconds(10), () -> transport(a).inboundConnections() == 0
                            && transport(b).inboundConnections() == 0,
                    () -> "idle connections closed: a " + transport(a).inboundConnections() + ", b "
                            + transport(b).inboundConnections());
        }
        assertThat(cluster.jmx(a).managerCount("failed")).isZero();
        assertThat(cluster.jmx(b).managerCount("failed")).isZero();
        assertThat(cluster.jmx(a).managerCount("refusedConnections")).isZero();
    }

    /** Whether the node closes {@code s} (end of stream or reset) within 5 s. */
    private static boolean closedByNode(Socket s) throws IOException {
        s.setSoTimeout(5000);
        try {
            return s.getInputStream().read() == -1;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Test
    void withTls_theBoundHoldsToo_andAnEstablishedConnectionOutlivesTheHandshakeDeadline() throws Exception {
        Path keyStore = TestKeyStores.selfSigned("node", "ehrelay-test", null);
        TransportFixture tls = RmiContractTest.FIXTURE
                .withListenerProperties(RmiContractTest.FIXTURE.listenerProperties() + ", maxInboundConnections=8")
                .withExtraProviderProperties("tls=true, tlsKeyStore=" + keyStore.toAbsolutePath()
                        + ", tlsKeyStorePassword=changeit, tlsTrustStore=" + keyStore.toAbsolutePath()
                        + ", tlsTrustStorePassword=changeit");
        InboundConnections.handshakeMillis = 1000;
        cluster = new ContractCluster(tls);
        CacheManager a = cluster.start("tls-a");
        CacheManager b = cluster.start("tls-b");
        b.getCache("async").put(new Element("warm", "up"));
        Await.until(() -> a.getCache("async").get("warm") != null, () -> "replication over TLS");
        int registryPort = RmiUrls.port(cluster.endpoint(a));

        int failed = openIdleConnections(200, registryPort);
        Jmx jmx = cluster.jmx(a);
        Await.until(() -> jmx.managerCount("refusedConnections") >= 200 - failed - 8,
                () -> "refusedConnections " + jmx.managerCount("refusedConnections"));
        assertThat(transport(a).inboundConnections()).isLessThanOrEqualTo(8);
        b.getCache("sync").put(new Element("during", "v"));
        assertThat(a.getCache("sync").get("during")).isNotNull();
        closeAttackers();

        // b's connection finished its TLS handshake: the handshake deadline (1 s) no longer applies to it
        b.getCache("sync").put(new Element("before-pause", "v"));
        // a connection opened after b's that never starts its handshake: once a ended it for missing the deadline
        // (a TLS alert, then the end), b's older connection was past the deadline too
        try (Socket late = new Socket(InetAddress.getLoopbackAddress(), registryPort)) {
            late.setSoTimeout(5000);
            InputStream in = late.getInputStream();
            while (in.read() >= 0) {
                // the alert
            }
        }
        assertThat(transport(a).inboundConnections()).as("b's connection, established, still open").isPositive();
        b.getCache("sync").put(new Element("after-pause", "v"));
        assertThat(a.getCache("sync").get("after-pause")).isNotNull();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
