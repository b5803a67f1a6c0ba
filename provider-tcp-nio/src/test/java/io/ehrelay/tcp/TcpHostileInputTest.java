package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.HostileInputs;
import io.ehrelay.contract.Jmx;
import io.ehrelay.internal.codec.EventCodec;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Bytes that are not a peer's frames, sent straight to a node's listening port on 127.0.0.1. */
@Timeout(60)
class TcpHostileInputTest {

    private ContractCluster cluster;
    private CacheManager node;
    private InetSocketAddress address;

    @BeforeEach
    void start() {
        cluster = new ContractCluster(TcpContractTest.FIXTURE);
        node = cluster.start("target");
        address = TcpWire.address(cluster.endpoint(node));
    }

    @AfterEach
    void stop() {
        cluster.close();
    }

    private static byte[] hello() {
        return TcpWire.frame(Frames.Type.HELLO, "hostile:1".getBytes(StandardCharsets.UTF_8));
    }

    private long malformed() {
        return cluster.jmx(node).managerCount("malformedFrames");
    }

    @Test
    void badMagic_closesTheConnectionAndIsCounted() throws Exception {
        try (Socket s = new Socket(address.getAddress(), address.getPort())) {
            s.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(TcpWire.closedByPeer(s, 5000)).isTrue();
        }
        Await.until(() -> malformed() == 1, () -> "malformedFrames=" + malformed());
    }

    @Test
    void frameAnnouncingGigabytes_isRejectedAfterItsHeader() throws Exception {
        long heapBefore = usedHeap();
        try (Socket s = new Socket(address.getAddress(), address.getPort())) {
            OutputStream out = s.getOutputStream();
            out.write(hello());
            ByteBuffer h = ByteBuffer.allocate(Frames.HEADER_BYTES);
            Frames.writeHeader(h, Frames.Type.EVENTS, 0, 0);
            h.putInt(12, Integer.MAX_VALUE);
            out.write(h.array());
            assertThat(TcpWire.closedByPeer(s, 5000)).isTrue();
        }
        Await.until(() -> malformed() == 1, () -> "malformedFrames=" + malformed());
        assertThat(usedHeap() - heapBefore).as("heap grown while rejecting").isLessThan(256L << 20);
    }

    private static long usedHeap() {
        Runtime r = Runtime.getRuntime();
        return r.totalMemory() - r.freeMemory();
    }

    @Test
    void garbledBatchInsideASoundFrame_isCountedAndLaterBatchesStillApply() throws Exception {
        byte[] garbage = new byte[300];
        new Random(7).nextBytes(garbage);
        garbage[0] = 1;
        byte[] good = EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("k", "v")));
        try (Socket s = new Socket(address.getAddress(), address.getPort())) {
            OutputStream out = s.getOutputStream();
            out.write(hello());
            out.write(TcpWire.frame(Frames.Type.EVENTS, garbage));
            out.write(TcpWire.frame(Frames.Type.EVENTS, good));
            out.flush();
            Await.until(() -> node.getEhcache("async").get("k") != null, () -> "good batch not applied");
        }
        assertThat(malformed()).isEqualTo(1);
        assertThat(node.getEhcache("async").getSize()).isEqualTo(1);
    }

    @Test
    void fuzz_100kHostileBatches_eachCountedNoneApplied_andTheNodeStillReplicates() throws Exception {
        long before = malformed();
        long heapBefore = usedHeap();
        int n = 100_000;
        HostileInputs.Tally tally;
        try (Socket s = new Socket(address.getAddress(), address.getPort())) {
            OutputStream out = new BufferedOutputStream(s.getOutputStream(), 1 << 16);
            out.write(hello());
            tally = HostileInputs.generate(2026, n, batch -> {
                try {
                    out.write(TcpWire.frame(Frames.Type.EVENTS, batch));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            out.flush();
            // a damaged batch inside a sound frame keeps the connection: every one is decoded and counted
            Await.until(() -> malformed() - before == n, () -> "malformedFrames " + (malformed() - before) + " of " + n);
        }
        System.out.printf("[tcp] fuzz: %s, all counted in malformedFrames; heap grew %d MB%n", tally,
                (usedHeap() - heapBefore) >> 20);
        for (String cache : node.getCacheNames()) {
            assertThat(node.getEhcache(cache).getSize()).as(cache).isZero();
        }
        // the node is still a working peer
        CacheManager peer = cluster.start("peer");
        peer.getEhcache("async").put(new Element("after", "fuzz"));
        Await.until(() -> node.getEhcache("async").get("after") != null, () -> "the node stopped replicating");
    }

    @Test
    void randomBytesOnManyConnections_areRejected_andNeverTouchTheCache() throws Exception {
        Random random = new Random(11);
        for (int i = 0; i < 200; i++) {
            try (Socket s = new Socket(address.getAddress(), address.getPort())) {
                byte[] junk = new byte[1 + random.nextInt(2000)];
                random.nextBytes(junk);
                if (i % 2 == 0) {
                    s.getOutputStream().write(hello());
                }
                s.getOutputStream().write(junk);
                s.shutdownOutput();
                // the node has read the junk to its end (or rejected it) when it closes the connection
                assertThat(TcpWire.closedByPeer(s, 5000)).as("connection %d closed by the node", i).isTrue();
            } catch (SocketException e) {
                // the node closed (reset) while the junk was still being written: it rejected it
            }
        }
        assertThat(malformed()).as("malformedFrames").isPositive();
        for (String cache : node.getCacheNames()) {
            assertThat(node.getEhcache(cache).getSize()).as(cache).isZero();
        }
        assertThat(Jmx.query("io.ehrelay:type=CacheManager,cacheManager=" + node.getName() + ",*")).isNotEmpty();
    }
}
