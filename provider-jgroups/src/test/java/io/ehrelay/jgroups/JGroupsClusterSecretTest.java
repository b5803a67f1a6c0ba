package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.testing.LogCapture;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.jgroups.conf.ProtocolConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code clusterSecret} on JGroups, over the shipped TCP stack on 127.0.0.1: members holding the secret form the
 * cluster and replicate; a node with another secret, or none, never becomes a member (SYM_ENCRYPT under a key
 * derived from the secret), whatever its host; the key store SYM_ENCRYPT read is gone once the channel is built.
 */
@Timeout(180)
class JGroupsClusterSecretTest {

    private static final String SECRET = "clusterSecret=correct-horse-battery-staple";

    @Test
    void onlyNodesWithTheSecret_becomeMembers() throws Exception {
        TransportFixture fixture = JGroupsFixtures.tcp();
        try (ContractCluster cluster = new ContractCluster(fixture)) {
            CacheManager a = cluster.start("a", SECRET);
            CacheManager b = cluster.start("b", SECRET);
            ReplicationNode na = cluster.node(a);
            ReplicationNode nb = cluster.node(b);
            Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1, () -> "a and b did not meet");
            a.getCache("async").put(new Element("k", "v"));
            Await.until(() -> b.getCache("async").get("k") != null, () -> "not replicated between secret holders");
            assertThat(leftoverKeyStores()).as("key stores left in " + System.getProperty("java.io.tmpdir"))
                    .isZero();

            // both at once: each waits out JGroups' join attempts (about 10 s) before it is a cluster of its own
            CompletableFuture<CacheManager> otherStarted = CompletableFuture
                    .supplyAsync(() -> cluster.start("other", "clusterSecret=another-secret-of-16-chars", false));
            CacheManager none = cluster.start("none", "", false);
            CacheManager other = otherStarted.get();
            other.getCache("sync").put(new Element("fromOther", "x"));
            none.getCache("sync").put(new Element("fromNone", "x"));
            a.getCache("sync").put(new Element("fromA", "y"));
            assertThat(b.getCache("sync").get("fromA")).as("a → b, synchronously").isNotNull();
            assertThat(cluster.node(other).peers()).isEmpty();
            assertThat(cluster.node(none).peers()).isEmpty();
            assertThat(na.peers()).hasSize(1);
            assertThat(a.getCache("sync").get("fromOther")).isNull();
            assertThat(a.getCache("sync").get("fromNone")).isNull();
            assertThat(other.getCache("sync").get("fromA")).isNull();
            assertThat(none.getCache("sync").get("fromA")).isNull();
        }
    }

    /**
     * A node with another secret, and one with none, next to a member: the member names each once, saying to set the
     * same clusterSecret everywhere (at most one line per sender and minute), and counts their messages in
     * unauthorized; JGroups' own ERROR per message it cannot decrypt (dozens in 20 s before) is not logged.
     */
    @Test
    void anotherSecret_orNone_isNamedOnce_andJGroupsDoesNotFloodTheLog() throws Exception {
        TransportFixture fixture = JGroupsFixtures.tcp();
        try (ContractCluster cluster = new ContractCluster(fixture); LogCapture log = LogCapture.start()) {
            CacheManager a = cluster.start("a", SECRET);
            // both at once: while they try to join, a is the only coordinator either can find (one started after
            // the other gave up and became a coordinator itself could pick that one instead of a)
            Thread other = new Thread(() -> cluster.start("other", "clusterSecret=another-secret-of-16-chars", false));
            other.start();
            cluster.start("none", "", false);
            other.join();
            String from = "ehrelay: CacheManager " + a.getName() + ": JGroups node ";
            String otherSecret = "encrypts with another key: its clusterSecret differs from this node's; set the same "
                    + "clusterSecret on every node (its messages are dropped and counted in unauthorized)";
            String noSecret = "sends unencrypted messages: it has no clusterSecret, and this node has one; set the "
                    + "same clusterSecret on every node (its messages are dropped and counted in unauthorized)";
            long[] dropped = new long[1];
            // a dozen messages dropped: before, each was one ERROR of SYM_ENCRYPT's
            Await.until(() -> {
                dropped[0] = cluster.node(a).metrics().count("unauthorized").value();
                return dropped[0] >= 12 && !lines(log, from, otherSecret).isEmpty()
                        && !lines(log, from, noSecret).isEmpty();
            }, () -> "a dropped " + dropped[0] + " messages; its lines: " + log.lines(from));
            assertThat(lines(log, from, otherSecret)).as("one line for the node with another secret").hasSize(1);
            assertThat(lines(log, from, noSecret)).as("one line for the node without a secret").hasSize(1);
            assertThat(log.lines("rejected decryption")).as("SYM_ENCRYPT's ERRORs").hasSizeLessThanOrEqualTo(2);
            assertThat(log.lines("without encrypt header")).as("SYM_ENCRYPT's ERRORs").hasSizeLessThanOrEqualTo(2);
            assertThat(cluster.node(a).peers()).isEmpty();
        }
    }

    /**
     * The other way round: a node without a secret that a node with one tries to join (it found it first) is told
     * too, instead of receiving messages it cannot read.
     */
    @Test
    void aNodeWithoutASecret_isTold_whenOneWithASecretTriesToJoinIt() throws Exception {
        TransportFixture fixture = JGroupsFixtures.tcp();
        try (ContractCluster cluster = new ContractCluster(fixture); LogCapture log = LogCapture.start()) {
            CacheManager none = cluster.start("none", "", false);
            cluster.start("a", SECRET, false);
            String from = "ehrelay: CacheManager " + none.getName() + ": JGroups node ";
            String says = "sends encrypted messages: it has a clusterSecret, and this node has none; set the same "
                    + "clusterSecret on every node (its messages are dropped and counted in unauthorized)";
            Await.until(() -> !lines(log, from, says).isEmpty(), () -> "none's lines: " + log.lines(from));
            assertThat(lines(log, from, says)).hasSize(1);
            assertThat(cluster.node(none).metrics().count("unauthorized").value()).isPositive();
            assertThat(cluster.node(none).peers()).isEmpty();
        }
    }

    private static List<String> lines(LogCapture log, String from, String says) {
        List<String> out = new ArrayList<>();
        for (String line : log.lines(from)) {
            if (line.contains(says)) {
                out.add(line);
            }
        }
        return out;
    }

    @Test
    void aStackThatEncryptsAlready_isNotEncryptedTwice() throws Exception {
        // the old module's inline stacks may carry ENCRYPT, which becomes SYM_ENCRYPT
        List<ProtocolConfiguration> stack = JGroupsStacks.fromConnect(
                "TCP(bind_addr=127.0.0.1):TCPPING(initial_hosts=127.0.0.1[7800]):ENCRYPT:pbcast.NAKACK2:UNICAST3"
                        + ":pbcast.GMS");
        assertThatThrownBy(() -> JGroupsStacks.encryptWith(stack,
                ClusterSecret.of("correct-horse-battery-staple")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("encrypts already");
        List<ProtocolConfiguration> plain = JGroupsStacks.fromFile(JGroupsStacks.TCP_STACK);
        Path keyStore = JGroupsStacks.encryptWith(plain, ClusterSecret.of("correct-horse-battery-staple"));
        try {
            int encrypt = -1;
            int nakack = -1;
            for (int i = 0; i < plain.size(); i++) {
                String name = plain.get(i).getProtocolName();
                encrypt = name.equals("SYM_ENCRYPT") ? i : encrypt;
                nakack = name.endsWith("NAKACK2") ? i : nakack;
            }
            assertThat(encrypt).as("SYM_ENCRYPT right below NAKACK2").isEqualTo(nakack - 1);
        } finally {
            Files.deleteIfExists(keyStore);
        }
    }

    private static long leftoverKeyStores() throws Exception {
        try (Stream<Path> files = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
            return files.filter(p -> p.getFileName().toString().startsWith("ehrelay-jgroups-")).count();
        }
    }
}
