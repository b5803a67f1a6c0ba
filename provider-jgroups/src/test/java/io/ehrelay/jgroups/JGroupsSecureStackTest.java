package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The secured stack of docs/jgroups.md (SYM_ENCRYPT with a shared AES key, AUTH with an X509Token), on 127.0.0.1: members
 * holding the key and the secret replicate; a member with another key never joins them; a member with the
 * wrong secret is refused and its CacheManager does not start.
 */
@Timeout(180)
class JGroupsSecureStackTest {

    private static final String PASSWORD = "changeit";

    private static Path keytool(Path store, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "keytool")
                .toString()));
        cmd.addAll(List.of(args));
        cmd.addAll(List.of("-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", PASSWORD,
                "-keypass", PASSWORD));
        Files.deleteIfExists(store);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed: " + out);
        }
        return store.toAbsolutePath();
    }

    /** docs/jgroups.md's example stack, with this test's key stores and secret. */
    private static Path stack(Path dir, String name, Path clusterKey, Path authKey, String secret) throws Exception {
        String xml = "<config xmlns=\"urn:org:jgroups\">\n"
                + "    <TCP bind_addr=\"127.0.0.1\" bind_port=\"7800\" port_range=\"10\" tcp_nodelay=\"true\"/>\n"
                + "    <TCPPING initial_hosts=\"127.0.0.1[7800]\" port_range=\"2\"/>\n"
                + "    <MERGE3/>\n    <FD_SOCK2/>\n    <FD_ALL3/>\n    <VERIFY_SUSPECT2/>\n"
                + "    <SYM_ENCRYPT keystore_name=\"" + clusterKey + "\" keystore_type=\"PKCS12\"\n"
                + "                 store_password=\"" + PASSWORD + "\" alias=\"ehrelay\"/>\n"
                + "    <pbcast.NAKACK2 use_mcast_xmit=\"false\"/>\n    <UNICAST3/>\n    <pbcast.STABLE/>\n"
                + "    <AUTH auth_class=\"org.jgroups.auth.X509Token\" auth_token.auth_value=\"" + secret + "\"\n"
                + "          auth_token.keystore_type=\"PKCS12\" auth_token.keystore_path=\"" + authKey + "\"\n"
                + "          auth_token.keystore_password=\"" + PASSWORD + "\" auth_token.cert_alias=\"ehrelay\"\n"
                + "          auth_token.cert_password=\"" + PASSWORD + "\" auth_token.cipher_type=\"RSA\"/>\n"
                + "    <pbcast.GMS join_timeout=\"1s\"/>\n    <UFC/>\n    <MFC/>\n    <FRAG4/>\n"
                + "</config>\n";
        Path file = dir.resolve(name + ".xml");
        Files.writeString(file, xml);
        return file.toAbsolutePath();
    }

    @Test
    void encryptedAuthenticatedStack_keepsOutsidersOut() throws Exception {
        Path dir = Files.createDirectories(Path.of("target", "jgroups-secure"));
        Path clusterKey = keytool(dir.resolve("cluster.p12"), "-genseckey", "-alias", "ehrelay", "-keyalg", "AES",
                "-keysize", "256");
        Path otherKey = keytool(dir.resolve("other.p12"), "-genseckey", "-alias", "ehrelay", "-keyalg", "AES",
                "-keysize", "256");
        Path authKey = keytool(dir.resolve("auth.p12"), "-genkeypair", "-alias", "ehrelay", "-keyalg", "RSA",
                "-keysize", "2048", "-dname", "CN=ehrelay", "-validity", "2");
        Path good = stack(dir, "secure", clusterKey, authKey, "cluster-secret");
        Path wrongKey = stack(dir, "wrong-key", otherKey, authKey, "cluster-secret");
        Path wrongSecret = stack(dir, "wrong-secret", clusterKey, authKey, "not-the-secret");

        TransportFixture fixture = JGroupsFixtures.tcp();
        ContractCluster template = new ContractCluster(fixture);
        List<CacheManager> started = new ArrayList<>();
        try {
            CacheManager a = start(started, template, fixture, "sec-a", good);
            CacheManager b = start(started, template, fixture, "sec-b", good);
            ReplicationNode na = ReplicationNode.find(a, fixture.scheme());
            ReplicationNode nb = ReplicationNode.find(b, fixture.scheme());
            Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1, () -> "a and b did not meet");
            a.getEhcache("async").put(new Element("k", "v"));
            Await.until(() -> b.getEhcache("async").get("k") != null, () -> "not replicated over the secure stack");

            // another key: its messages cannot be read, so it forms a cluster of its own. Its CacheManager starts
            // once its channel has joined a cluster or founded one, so the views are settled here
            CacheManager c = start(started, template, fixture, "sec-c", wrongKey);
            ReplicationNode nc = ReplicationNode.find(c, fixture.scheme());
            assertThat(nc.peers()).isEmpty();
            assertThat(na.peers()).hasSize(1);
            // a synchronous put returns once every member of the sender's view has the element: c's reaches
            // nobody, a's reaches b and not c
            c.getEhcache("sync").put(new Element("fromC", "x"));
            a.getEhcache("sync").put(new Element("k2", "v2"));
            assertThat(b.getEhcache("sync").get("k2")).as("a → b").isNotNull();
            assertThat(a.getEhcache("sync").get("fromC")).isNull();
            assertThat(c.getEhcache("sync").get("k2")).isNull();
            assertThat(nc.peers()).isEmpty();
            assertThat(na.peers()).hasSize(1);
            // c is the coordinator of a cluster of its own with the same name: a joiner could ask it instead of
            // a, and time out there (it cannot read c's messages) rather than be refused by a's AUTH
            c.shutdown();
            started.remove(c);

            // the right key but the wrong secret: AUTH refuses the join, the CacheManager does not start
            assertThatThrownBy(() -> start(started, template, fixture, "sec-d", wrongSecret))
                    .hasMessageContaining("jgroups");
            Await.until(Duration.ofSeconds(5), () -> na.peers().size() == 1, () -> "a sees " + na.peers());
        } finally {
            for (int i = started.size() - 1; i >= 0; i--) {
                started.get(i).shutdown();
            }
        }
    }

    private static CacheManager start(List<CacheManager> started, ContractCluster template, TransportFixture fixture,
                                      String name, Path stack) {
        String xml = template.xml(name, fixture.extraProviderProperties().replace(
                "file=" + JGroupsStacks.TCP_STACK, "file=" + stack));
        CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        started.add(cm);
        return cm;
    }
}
