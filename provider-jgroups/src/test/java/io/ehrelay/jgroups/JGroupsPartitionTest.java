package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.jgroups.protocols.DISCARD;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;

/**
 * A partition and its healing (JGroups' DISCARD cuts member b off; MERGE3 merges the views again): both sides
 * write while apart; after the merge, the member outside the reference side (the one holding the merged view's
 * coordinator) reloads its caches from the reference side, whose values win. Loopback only (TTL 0).
 */
@Timeout(120)
class JGroupsPartitionTest {

    @Test
    void afterAMerge_theOtherSideResyncsFromTheReferenceSide() {
        TransportFixture fixture = JGroupsFixtures.udp();
        try (ContractCluster cluster = new ContractCluster(fixture)) {
            CacheManager a = cluster.start("part-a", "file=jgroups-partition-udp.xml");
            CacheManager b = cluster.start("part-b", "file=jgroups-partition-udp.xml");
            ReplicationNode na = cluster.node(a);
            ReplicationNode nb = cluster.node(b);
            a.getEhcache("async").put(new Element("shared", "before"));
            Await.until(() -> b.getEhcache("async").get("shared") != null, () -> "not replicated before the cut");

            DISCARD cut = ((JGroupsTransport) nb.transport()).channel().getProtocolStack().findProtocol(DISCARD.class);
            cut.discardAll(true);
            Await.until(Duration.ofSeconds(60), () -> na.peers().isEmpty() && nb.peers().isEmpty(),
                    () -> "still together: a sees " + na.peers() + ", b sees " + nb.peers());
            a.getEhcache("async").put(new Element("shared", "A"));
            a.getEhcache("async").put(new Element("onlyA", "a"));
            b.getEhcache("async").put(new Element("shared", "B"));
            b.getEhcache("async").put(new Element("onlyB", "b"));

            cut.discardAll(false);
            Await.until(Duration.ofSeconds(60), () -> na.peers().size() == 1 && nb.peers().size() == 1,
                    () -> "not merged: a sees " + na.peers() + ", b sees " + nb.peers());
            JGroupsTransport ta = (JGroupsTransport) na.transport();
            boolean aIsReference = ta.channel().getView().getCoord().equals(ta.channel().getAddress());
            CacheManager reference = aIsReference ? a : b;
            CacheManager other = aIsReference ? b : a;
            String referenceValue = aIsReference ? "A" : "B";
            String referenceOnly = aIsReference ? "onlyA" : "onlyB";
            String otherOnly = aIsReference ? "onlyB" : "onlyA";
            Jmx otherJmx = cluster.jmx(other);
            Await.until(Duration.ofSeconds(30), () -> otherJmx.managerCount("resyncs") == 1,
                    () -> other.getName() + " did not resync");
            assertThat(other.getEhcache("async").get("shared").getObjectValue()).isEqualTo(referenceValue);
            assertThat(other.getEhcache("async").get(referenceOnly)).isNotNull();
            // the documented policy: the other side ends equal to the reference; what only it wrote is superseded
            Await.until(() -> other.getEhcache("async").get(otherOnly) == null, () -> otherOnly + " still on "
                    + other.getName());
            assertThat(reference.getEhcache("async").get(otherOnly)).isNull();
            assertThat(other.getEhcache("async").getSize()).isEqualTo(reference.getEhcache("async").getSize());
            assertThat(reference.getEhcache("async").get("shared").getObjectValue()).isEqualTo(referenceValue);
            assertThat(cluster.jmx(reference).managerCount("resyncs")).isZero();
        }
    }
}
