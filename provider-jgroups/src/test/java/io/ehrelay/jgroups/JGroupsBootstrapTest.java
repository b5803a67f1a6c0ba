package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bootstrap from a member that leaves in the middle of the transfer: the newcomer moves on to the other
 * member and ends with the full content. The two sources receive every message 15 ms late (JGroups' DELAY),
 * so that the paged transfer (20 KB pages) lasts seconds and the serving member can be stopped during it.
 */
@Timeout(180)
class JGroupsBootstrapTest {

    private static final int ELEMENTS = 3000;

    @Test
    void sourceLeavingMidTransfer_newcomerRetriesTheOtherMember() throws Exception {
        TransportFixture fixture = JGroupsFixtures.udp();
        ContractCluster template = new ContractCluster(fixture);
        CacheManager a = null;
        CacheManager b = null;
        CompletableFuture<CacheManager> c = null;
        System.setProperty("ehrelay.test.delay", "15");
        try {
            String slow = fixture.extraProviderProperties() + ", file=jgroups-delay-udp.xml";
            a = manager(template.xml("boot-a", slow));
            b = manager(template.xml("boot-b", slow));
            ReplicationNode na = ReplicationNode.find(a, fixture.scheme());
            ReplicationNode nb = ReplicationNode.find(b, fixture.scheme());
            Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1, () -> "no view with a and b");
            byte[] value = new byte[2000];
            for (int i = 0; i < ELEMENTS; i++) {
                a.getEhcache("bootstrapped").put(new Element("k" + i, value.clone()));
            }
            CacheManager bb = b;
            Await.until(Duration.ofSeconds(60), () -> bb.getEhcache("bootstrapped").getSize() == ELEMENTS,
                    () -> "b has " + bb.getEhcache("bootstrapped").getSize());

            // the newcomer's bootstrap is synchronous: its CacheManager is built on another thread
            c = CompletableFuture.supplyAsync(() -> manager(template.xml("boot-c", fixture.extraProviderProperties())));
            JGroupsTransport ta = (JGroupsTransport) na.transport();
            JGroupsTransport tb = (JGroupsTransport) nb.transport();
            Await.until(Duration.ofSeconds(60), () -> ta.openTransfers() + tb.openTransfers() > 0,
                    () -> "no transfer started");
            boolean aServes = ta.openTransfers() > 0;
            (aServes ? a : b).shutdown();
            if (aServes) {
                a = null;
            } else {
                b = null;
            }
            CacheManager newcomer = c.get(120, TimeUnit.SECONDS);
            assertThat(newcomer.getEhcache("bootstrapped").getSize()).isEqualTo(ELEMENTS);
            assertThat(new Jmx(newcomer.getName(), fixture.transportName()).cacheCount("bootstrapped", "bootstraps"))
                    .isEqualTo(1);
        } finally {
            System.clearProperty("ehrelay.test.delay");
            if (c != null) {
                c.thenAccept(CacheManager::shutdown);
            }
            for (CacheManager cm : new CacheManager[] {b, a}) {
                if (cm != null) {
                    cm.shutdown();
                }
            }
        }
    }

    /**
     * JGroups' connect returns with the view, so a bootstrap does not wait for heartbeats: Ehcache's
     * {@code getTimeForClusterToForm} is 0, and a member that starts after another still loads its content.
     */
    @Test
    void clusterFormsWithTheView_noWaitBeforeBootstrap() {
        TransportFixture fixture = JGroupsFixtures.tcp();
        try (ContractCluster cluster = new ContractCluster(fixture)) {
            CacheManager a = cluster.start("form-a");
            assertThat(a.getCacheManagerPeerProvider(fixture.scheme()).getTimeForClusterToForm()).isZero();
            a.getEhcache("bootstrapped").put(new Element("k", "v"));
            CacheManager b = cluster.start("form-b");
            assertThat(b.getEhcache("bootstrapped").get("k")).as("loaded by b's synchronous bootstrap").isNotNull();
        }
    }

    private static CacheManager manager(String xml) {
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }
}
