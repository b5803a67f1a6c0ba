package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

import io.ehrelay.contract.Await;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An {@code ehcache.xml} written for the old {@code ehcache-jgroupsreplication} module works after replacing
 * {@code net.sf.ehcache.distribution.jgroups.} by {@code io.ehrelay.jgroups.}: its inline JGroups 3 stack is
 * translated, puts, updates (invalidation: {@code replicateUpdatesViaCopy=false}) and removes replicate, a
 * synchronous cache waits, and a third node bootstraps.
 */
@Timeout(120)
class JGroupsDropInTest {

    private static String oldXml(String name, String cluster, String group, int port) throws IOException {
        try (InputStream in = JGroupsDropInTest.class.getResourceAsStream("/old-module-ehcache.xml")) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${name}", name)
                    .replace("${cluster}", cluster).replace("${group}", group).replace("${port}", Integer.toString(port));
        }
    }

    private static CacheManager dropIn(String oldXml) {
        String xml = oldXml.replace("net.sf.ehcache.distribution.jgroups.", "io.ehrelay.jgroups.");
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void oldModulesEhcacheXml_worksWithOnlyTheClassNamesChanged() throws Exception {
        String cluster = "dropin-" + ProcessHandle.current().pid();
        String group = "230.0.0." + (100 + ThreadLocalRandom.current().nextInt(100));
        int port = 40000 + ThreadLocalRandom.current().nextInt(20000);
        CacheManager a = null;
        CacheManager b = null;
        CacheManager c = null;
        try {
            a = dropIn(oldXml("dropin-a", cluster, group, port));
            b = dropIn(oldXml("dropin-b", cluster, group, port));
            ReplicationNode na = ReplicationNode.find(a, JGroupsSettings.SCHEME);
            ReplicationNode nb = ReplicationNode.find(b, JGroupsSettings.SCHEME);
            Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1, () -> "no view with both");
            JGroupsTransport ta = (JGroupsTransport) na.transport();
            assertThat(ta.clusterName()).isEqualTo(cluster);
            assertThat(ta.channel().getProtocolStack().getProtocols().stream().map(p -> p.getName()))
                    .containsExactly("GMS", "FRAG", "STABLE", "UNICAST3", "NAKACK2", "SecretMismatchGuard",
                            "VERIFY_SUSPECT", "FD_SOCK", "MERGE3", "PING", "OutsiderGuard", "UDP");
            // ehrelay's guards: the old stack does not authenticate (outsiders' unicasts), and a member with a
            // clusterSecret would send what this one cannot decrypt

            CacheManager bb = b;
            for (int i = 0; i < 500; i++) {
                a.getEhcache("sampleCache").put(new Element("k" + i, "v" + i));
            }
            Await.until(() -> bb.getEhcache("sampleCache").getSize() == 500, () -> "b has "
                    + bb.getEhcache("sampleCache").getSize());
            // replicateUpdatesViaCopy=false: an update removes the peer's copy
            a.getEhcache("sampleCache").put(new Element("k0", "changed"));
            Await.until(() -> bb.getEhcache("sampleCache").get("k0") == null, () -> "b still has k0");
            b.getEhcache("sampleCache").remove("k1");
            CacheManager aa = a;
            Await.until(() -> aa.getEhcache("sampleCache").get("k1") == null, () -> "a still has k1");
            // replicateAsynchronously=false: on b when the put returns
            a.getEhcache("syncCache").put(new Element("s", "sync"));
            assertThat(b.getEhcache("syncCache").get("s")).isNotNull();

            c = dropIn(oldXml("dropin-c", cluster, group, port));
            // bootstrapAsynchronously=false: loaded when the CacheManager is up, from a or b (b lost k0 to the
            // invalidation, so their sizes differ by one)
            assertThat(c.getEhcache("sampleCache").getSize()).isIn(a.getEhcache("sampleCache").getSize(),
                    b.getEhcache("sampleCache").getSize());
            for (int i = 2; i < 500; i++) {
                assertThat(c.getEhcache("sampleCache").get("k" + i).getObjectValue()).isEqualTo("v" + i);
            }
        } finally {
            for (CacheManager cm : new CacheManager[] {c, b, a}) {
                if (cm != null) {
                    cm.shutdown();
                }
            }
        }
    }
}
