package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a local process can make a TCP node hold, on 127.0.0.1: connections that announce large frames and send
 * part of them share one receive-buffer bound per node ({@code inboundBufferMaxBytes}), those that stop
 * mid-frame are closed (their memory freed), a connection that never says HELLO is closed, and replication
 * between honest nodes goes on meanwhile.
 */
@Timeout(120)
class TcpResourceBoundsTest {

    private static final int MB = 1 << 20;
    private final ContractCluster cluster = new ContractCluster(TcpContractTest.FIXTURE);
    private final List<Socket> attackers = new ArrayList<>();
    private long stall;
    private int handshake;

    @BeforeEach
    void shorterTimeouts() {
        stall = TcpTransport.stallMillis;
        handshake = InboundConnection.handshakeMillis;
        TcpTransport.stallMillis = 3000;
        InboundConnection.handshakeMillis = 1000;
    }

    @AfterEach
    void stop() throws Exception {
        for (Socket s : attackers) {
            s.close();
        }
        cluster.close();
        TcpTransport.stallMillis = stall;
        InboundConnection.handshakeMillis = handshake;
    }

    @Test
    void eightConnectionsAnnouncingSixtyMegabytes_holdAtMostTheNodesBound_andHonestReplicationContinues()
            throws Exception {
        // the attackers hold what they got while they connect one after the other (on a busy machine that takes
        // longer than a short stall timeout, which would free the first ones' memory before the last arrive)
        TcpTransport.stallMillis = 60_000;
        CacheManager target = cluster.start("target", "maxFrameBytes=64m, inboundBufferMaxBytes=64m");
        CacheManager honest = cluster.start("honest", "");
        // the attackers write from one direct buffer made before the count (from a heap buffer, the JDK would
        // copy through a temporary direct one of 16 MB, cached by this thread, and count it as the node's)
        ByteBuffer part = ByteBuffer.allocateDirect(16 * MB);
        long directBefore = directBytes();
        InetSocketAddress address = TcpWire.address(cluster.endpoint(target));
        for (int i = 0; i < 8; i++) {
            SocketChannel ch = SocketChannel.open(address);
            attackers.add(ch.socket());
            byte[] hello = ("attacker:" + i).getBytes(StandardCharsets.UTF_8);
            ch.write(ByteBuffer.wrap(TcpWire.frame(Frames.Type.HELLO, hello)));
            ByteBuffer header = ByteBuffer.allocate(Frames.HEADER_BYTES);
            Frames.writeHeader(header, Frames.Type.EVENTS, 0, 60 * MB);
            header.flip();
            ch.write(header);
            // 16 of the 60 MB announced, as far as the node takes them within 2 s, then nothing more
            ch.configureBlocking(false);
            part.clear();
            long until = System.nanoTime() + 2_000_000_000L;
            while (part.hasRemaining() && System.nanoTime() < until) {
                if (ch.write(part) == 0) {
                    Thread.sleep(10);
                }
            }
            ch.configureBlocking(true);
        }
        // while they hold what they got: the node's buffers fill up to its bound and no further (the node's
        // readers take the bytes on their own threads: wait until they have), and honest events arrive
        long bound = 64L * MB + 8 * 64 * 1024;
        Await.until(Duration.ofSeconds(30),
                () -> cluster.jmx(target).managerGauge("inboundBufferBytes").longValue() >= 32L * MB,
                () -> "the attackers' frames (8 x 16 MB offered) hold only "
                        + cluster.jmx(target).managerGauge("inboundBufferBytes") + " bytes");
        long held = cluster.jmx(target).managerGauge("inboundBufferBytes").longValue();
        assertThat(held).as("the attackers' frames fill the bound (8 x 16 MB offered), and no more")
                .isGreaterThanOrEqualTo(32L * MB).isLessThanOrEqualTo(bound);
        // and so does the memory behind it: buffers outgrown on the way were freed, not left to the collector
        assertThat(directBytes() - directBefore).as("direct memory the attack holds (bound %d)", bound)
                .isLessThanOrEqualTo(bound + 4L * MB);
        honest.getCache("async").put(new Element("honest", "v"));
        Await.until(() -> target.getCache("async").get("honest") != null,
                () -> "an honest node's event arrives while the bound is reached");
        // they stopped mid-frame: after the stall timeout they are closed and their memory is free again
        TcpTransport.stallMillis = 2000;
        Await.until(Duration.ofSeconds(30),
                () -> cluster.jmx(target).managerGauge("inboundBufferBytes").longValue() == 0,
                () -> "buffers still held: " + cluster.jmx(target).managerGauge("inboundBufferBytes"));
        for (Socket s : attackers) {
            assertThat(TcpWire.closedByPeer(s, 15_000)).as("stalled connection closed").isTrue();
        }
        Await.until(Duration.ofSeconds(10), () -> directBytes() - directBefore <= 4L * MB,
                () -> "direct memory still held after the connections closed: "
                        + (directBytes() - directBefore) / MB + " MB");
    }

    /** The JVM's direct buffers in use (the nodes run in this JVM; the attackers' buffers are on the heap). */
    private static long directBytes() {
        for (BufferPoolMXBean pool
                : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        throw new IllegalStateException("no direct buffer pool");
    }

    @Test
    void aConnectionThatNeverSaysHello_isClosed() throws Exception {
        CacheManager target = cluster.start("target", "");
        try (Socket s = new Socket()) {
            s.connect(TcpWire.address(cluster.endpoint(target)), 2000);
            long start = System.nanoTime();
            assertThat(TcpWire.closedByPeer(s, 15_000)).isTrue();
            assertThat((System.nanoTime() - start) / 1_000_000).as("ms until closed").isLessThan(10_000);
        }
    }

}
