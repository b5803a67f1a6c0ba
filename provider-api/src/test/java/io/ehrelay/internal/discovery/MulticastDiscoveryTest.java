package io.ehrelay.internal.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import com.codahale.metrics.Meter;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.loopback.LoopbackContractTest;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Automatic discovery on the loopback interface only: the multicast sockets are bound to 127.0.0.1 (lo) with
 * TTL 0, so no packet leaves the machine.
 */
@Timeout(60)
class MulticastDiscoveryTest {

    @Test
    void nodesFindEachOtherByHeartbeat_andReplicate() {
        int port = 40000 + ThreadLocalRandom.current().nextInt(20000);
        String discovery = "peerDiscovery=automatic, multicastGroupAddress=230.0.0.42, multicastGroupPort=" + port
                + ", timeToLive=0, hostName=127.0.0.1, heartbeatIntervalMillis=100";
        ContractCluster cluster = new ContractCluster(LoopbackContractTest.FIXTURE.withAutomaticDiscovery(discovery));
        try {
            CacheManager a = cluster.start("mca");
            CacheManager b = cluster.start("mcb");
            ReplicationNode na = cluster.node(a);
            ReplicationNode nb = cluster.node(b);
            Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1,
                    () -> "a sees " + na.peers() + ", b sees " + nb.peers());
            assertThat(na.peers().get(0).endpoint()).isEqualTo(nb.localEndpoint());
            a.getEhcache("async").put(new Element("k", "v"));
            Await.until(() -> b.getEhcache("async").get("k") != null, () -> "not replicated");
            cluster.stop(b);
            Await.until(() -> na.peers().isEmpty(), () -> "b not expired: " + na.peers());
        } finally {
            cluster.close();
        }
    }

    @Test
    void heartbeatSize_doesNotDependOnCaches_andHostilePacketsAreCounted() {
        byte[] packet = MulticastHeartbeat.encode(UUID.randomUUID(), "tcp", "10.0.0.1:40001");
        assertThat(packet.length).isLessThanOrEqualTo(MulticastHeartbeat.MAX_PACKET);
        Meter malformed = new Meter();
        PeerDirectory dir = new PeerDirectory(List.of(), 5000);
        MulticastHeartbeat hb = new MulticastHeartbeat(null, "tcp", () -> null, dir, Thread::new, malformed);
        hb.onPacket(packet, packet.length);
        assertThat(dir.peers()).extracting(p -> p.endpoint()).containsExactly("10.0.0.1:40001");
        byte[] garbage = new byte[40];
        ThreadLocalRandom.current().nextBytes(garbage);
        hb.onPacket(garbage, garbage.length);
        byte[] truncated = Arrays.copyOf(packet, packet.length - 3);
        hb.onPacket(truncated, truncated.length);
        assertThat(malformed.getCount()).isEqualTo(2);
        byte[] otherTransport = MulticastHeartbeat.encode(UUID.randomUUID(), "rmi", "10.0.0.2:40001");
        hb.onPacket(otherTransport, otherTransport.length);
        assertThat(dir.peers()).hasSize(1);
    }
}
