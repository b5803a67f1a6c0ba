package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import org.jgroups.Message;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.UnicastHeader3;
import org.jgroups.stack.Protocol;
import org.jgroups.stack.ProtocolStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node that stops with events still queued: the queue drains into posts after the node told its peers it is
 * leaving, and those posts are lost on the wire once, so that only UNICAST3's retransmission brings them to b.
 * Closing the channel before that would drop the writes with nothing counted; the stop confirms with each member
 * that its last posts arrived first. Loopback only (TTL 0).
 */
@Timeout(120)
class JGroupsStopTest {

    @Test
    void aPostLostOnTheWireWhileStopping_stillReachesTheOtherMember() throws Exception {
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.udp())) {
            // b first: it coordinates, so a's leave is one round trip (a leaving coordinator takes longer)
            CacheManager b = cluster.start("stop-b", "antiEntropyIntervalMillis=0");
            CacheManager a = cluster.start("stop-a", "antiEntropyIntervalMillis=0, batchMaxBytes=64k");
            Ehcache fromA = a.getEhcache("async");
            fromA.put(new Element("before", 0));
            Await.until(() -> b.getEhcache("async").get("before") != null, () -> "not replicated before the stop");

            LosePostAfterLeaving wire = new LosePostAfterLeaving();
            ((JGroupsTransport) cluster.node(a).transport()).channel().getProtocolStack()
                    .insertProtocol(wire, ProtocolStack.Position.BELOW, UNICAST3.class);
            int n = 20_000;
            for (int i = 0; i < n; i++) {
                fromA.put(new Element(i, new byte[200]));
            }
            cluster.stop(a);

            assertThat(wire.lost.get()).as("posts that went out after the leave announcement and were lost").isPositive();
            Ehcache atB = b.getEhcache("async");
            Await.until(Duration.ofSeconds(10), () -> atB.getSize() == n + 1,
                    () -> "b holds " + atB.getSize() + " of the " + (n + 1) + " elements a wrote before stopping");
        }
    }

    /**
     * Below UNICAST3: until an acknowledged call goes by (the stopping node's leave announcement is the only one
     * in this test) each post is held 100 ms, so that events are still queued when the node stops (with 20 ms a
     * put loop slowed by a loaded machine could see the queue drain before it ended); after it, each
     * post is lost the first time it is sent, as a lossy wire would lose it, and only UNICAST3's retransmission
     * gets it through.
     */
    static final class LosePostAfterLeaving extends Protocol {
        private static final short UNICAST_ID = ClassConfigurator.getProtocolId(UNICAST3.class);
        final AtomicInteger lost = new AtomicInteger();
        private final Set<Long> sentOnce = ConcurrentHashMap.newKeySet();
        private volatile boolean leaving;

        @Override
        public Object down(Message msg) {
            CallHeader h = msg.getHeader(CallHeader.ID);
            if (h != null && h.op == CallHeader.DELIVER) {
                leaving = true;
            } else if (h != null && h.op == CallHeader.POST) {
                UnicastHeader3 seq = msg.getHeader(UNICAST_ID);
                if (leaving && seq != null && sentOnce.add(seq.seqno())) {
                    lost.incrementAndGet();
                    return null;
                }
                if (!leaving) {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                }
            }
            return down_prot.down(msg);
        }
    }
}
