package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Synchronous replication really waits: member b's stack delays every message it receives by 400 ms (JGroups'
 * DELAY protocol), so a synchronous put on a returns no sooner than that, with the element already on b; with a
 * timeout shorter than the delay the put fails naming b. The old module's "synchronous" mode waited for nobody.
 */
@Timeout(120)
class JGroupsSyncTest {

    private static final long DELAY_MILLIS = 400;

    @Test
    void syncPut_waitsForTheSlowMember_orFailsOnTimeoutNamingIt() {
        TransportFixture fixture = JGroupsFixtures.udp();
        ContractCluster template = new ContractCluster(fixture);
        String extraCache = "  <cache name=\"syncShort\" maxEntriesLocalHeap=\"1000\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + fixture.replicatorFactory() + "\"\n"
                + "        properties=\"replicateAsynchronously=false, syncTimeoutMillis=100\"/>\n  </cache>\n</ehcache>";
        CacheManager a = null;
        CacheManager b = null;
        try {
            a = manager(template.xml("sync-a", fixture.extraProviderProperties()).replace("</ehcache>", extraCache));
            b = manager(template.xml("sync-b", fixture.extraProviderProperties() + ", file=jgroups-delay-udp.xml")
                    .replace("</ehcache>", extraCache));
            ReplicationNode na = ReplicationNode.find(a, fixture.scheme());
            ReplicationNode nb = ReplicationNode.find(b, fixture.scheme());
            Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1, () -> "no view with both");
            CacheManager bb = b;
            // warm up the path (the first call says hello)
            a.getEhcache("sync").put(new Element("warm", "w"));
            for (int i = 0; i < 3; i++) {
                long t0 = System.nanoTime();
                a.getEhcache("sync").put(new Element("k" + i, "v" + i));
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                assertThat(bb.getEhcache("sync").get("k" + i)).as("on b when the put returned").isNotNull();
                assertThat(millis).as("sync put took").isGreaterThanOrEqualTo(DELAY_MILLIS - 5);
            }
            String bEndpoint = nb.localEndpoint();
            CacheManager aa = a;
            assertThatThrownBy(() -> aa.getEhcache("syncShort").put(new Element("late", "x")))
                    .isInstanceOf(CacheException.class).hasMessageContaining(bEndpoint);
            // asynchronous puts do not wait for the slow member
            long t0 = System.nanoTime();
            for (int i = 0; i < 100; i++) {
                a.getEhcache("async").put(new Element("a" + i, i));
            }
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isLessThan(DELAY_MILLIS);
            Await.until(() -> bb.getEhcache("async").getSize() == 100, () -> "async puts not on b");
        } finally {
            if (b != null) {
                b.shutdown();
            }
            if (a != null) {
                a.shutdown();
            }
        }
    }

    private static CacheManager manager(String xml) {
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }
}
