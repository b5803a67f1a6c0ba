package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.ConvergenceWorkload;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.jgroups.protocols.DISCARD;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A partition and its healing (JGroups' DISCARD cuts member b off; MERGE3 merges the views again): both sides
 * write while apart; after the merge, each side pulls from the other at once (anti-entropy is off here, so the
 * merge alone must do it): both end with the newest write of each key, whichever side made it. Loopback only
 * (TTL 0).
 */
@Timeout(120)
class JGroupsPartitionTest {

    @Test
    void afterAMerge_bothSidesEndWithTheNewestWriteOfEachKey() throws InterruptedException {
        TransportFixture fixture = JGroupsFixtures.udp();
        try (ContractCluster cluster = new ContractCluster(fixture)) {
            CacheManager a = cluster.start("part-a", "file=jgroups-partition-udp.xml, antiEntropyIntervalMillis=0");
            CacheManager b = cluster.start("part-b", "file=jgroups-partition-udp.xml, antiEntropyIntervalMillis=0");
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
            Thread.sleep(20); // b's write of "shared" is the later one, by any clock
            b.getEhcache("async").put(new Element("shared", "B"));
            b.getEhcache("async").put(new Element("onlyB", "b"));

            cut.discardAll(false);
            Await.until(Duration.ofSeconds(60), () -> na.peers().size() == 1 && nb.peers().size() == 1,
                    () -> "not merged: a sees " + na.peers() + ", b sees " + nb.peers());
            for (CacheManager cm : new CacheManager[] {a, b}) {
                Await.until(Duration.ofSeconds(30), () -> cluster.jmx(cm).managerCount("resyncs") == 1,
                        () -> cm.getName() + " did not resync from the other side");
            }
            for (CacheManager cm : new CacheManager[] {a, b}) {
                Await.until(Duration.ofSeconds(30), () -> cm.getEhcache("async").get("onlyA") != null
                        && cm.getEhcache("async").get("onlyB") != null
                        && "B".equals(cm.getEhcache("async").get("shared").getObjectValue()),
                        () -> cm.getName() + " holds " + ConvergenceWorkload.contents(
                                cm.getEhcache("async")));
            }
            assertThat(ConvergenceWorkload.differing(List.of(a.getEhcache("async"),
                    b.getEhcache("async")))).isEmpty();
        }
    }
}
