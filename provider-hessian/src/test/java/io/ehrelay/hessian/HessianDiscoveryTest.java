package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ThreadLocalRandom;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Automatic discovery for Hessian nodes on the loopback interface only (multicast bound to 127.0.0.1, TTL 0):
 * heartbeats carry each node's URL, and nodes that share the cluster token replicate to each other.
 */
@Timeout(60)
class HessianDiscoveryTest {

    @Test
    void nodesFindEachOthersUrlsByHeartbeat_andReplicate() {
        int port = 40000 + ThreadLocalRandom.current().nextInt(20000);
        String discovery = "peerDiscovery=automatic, multicastGroupAddress=230.0.0.43, multicastGroupPort=" + port
                + ", timeToLive=0, hostName=127.0.0.1, heartbeatIntervalMillis=100,"
                + " clusterToken=discovery-token-0123456789";
        TransportFixture automatic = HessianContractTest.FIXTURE.withAutomaticDiscovery(discovery);
        try (ContractCluster cluster = new ContractCluster(automatic)) {
            CacheManager a = cluster.start("hda");
            CacheManager b = cluster.start("hdb");
            ReplicationNode na = cluster.node(a);
            ReplicationNode nb = cluster.node(b);
            Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1,
                    () -> "a sees " + na.peers() + ", b sees " + nb.peers());
            assertThat(na.peers().get(0).endpoint()).isEqualTo(nb.localEndpoint())
                    .startsWith("http://127.0.0.1:").endsWith("/ehrelay");
            a.getEhcache("async").put(new Element("k", "v"));
            b.getEhcache("sync").put(new Element("k2", "v2"));
            Await.until(() -> b.getEhcache("async").get("k") != null, () -> "a → b not replicated");
            assertThat(a.getEhcache("sync").get("k2")).as("b → a, synchronous").isNotNull();
            cluster.stop(b);
            Await.until(() -> na.peers().isEmpty(), () -> "b not expired: " + na.peers());
        }
    }
}
