package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.testing.NetNamespace;
import io.ehrelay.testing.SocketAudit;
import net.sf.ehcache.CacheManager;
import org.jgroups.conf.ProtocolConfiguration;
import org.jgroups.protocols.FD_SOCK;
import org.jgroups.protocols.FD_SOCK2;
import org.jgroups.protocols.TP;
import org.jgroups.protocols.UDP;
import org.jgroups.stack.IpAddress;
import org.jgroups.stack.Protocol;
import org.jgroups.stack.ProtocolStack;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network rule for every JGroups stack the project ships or starts: each socket a node's JVM listens on is on
 * the address the node was given, and no multicast group is joined beyond {@code lo} (JGroups' diagnostics, on by
 * default, would join 224.0.75.75 on every interface and answer on 0.0.0.0; {@code FD_SOCK2} would listen on all
 * addresses). Read from {@code /proc} ({@link SocketAudit}) while two members run, on this host; and in a network
 * namespace of the test's own with a second interface, where plain JGroups shows what the guard catches.
 */
@Timeout(300)
class JGroupsListenersTest {

    private static final String SECRET = "listeners-test-secret-0123456789";

    /** The provider properties of each configuration started on this host, by what it is. */
    private static Map<String, String> hostConfigurations() {
        Map<String, String> c = new LinkedHashMap<>();
        String tcp = JGroupsFixtures.tcp().extraProviderProperties();
        c.put("shipped TCP stack, no bindAddress, no secret", tcp.replace("bindAddress=127.0.0.1, ", ""));
        c.put("shipped TCP stack, bindAddress=127.0.0.1, clusterSecret", JGroupsFixtures.tcp().extraProviderProperties()
                + ", clusterSecret=" + SECRET);
        c.put("shipped UDP stack, multicast on lo", JGroupsFixtures.udp().extraProviderProperties());
        c.put("shipped UDP stack, clusterSecret", JGroupsFixtures.udp().extraProviderProperties()
                + ", clusterSecret=" + SECRET);
        int port = 40000 + ThreadLocalRandom.current().nextInt(20000);
        c.put("the old module's connect= stack (JGroups 3 protocols, FD_SOCK)", "channelName=old-"
                + ProcessHandle.current().pid() + ", connect=UDP(bind_addr=127.0.0.1;mcast_addr=230.0.0."
                + (100 + ThreadLocalRandom.current().nextInt(100)) + ";mcast_port=" + port + ";ip_ttl=0)"
                + ":PING:MERGE2(min_interval=5000;max_interval=10000):FD_SOCK:VERIFY_SUSPECT(timeout=1500)"
                + ":pbcast.NAKACK:UNICAST:pbcast.STABLE(desired_avg_gossip=20000):FRAG"
                + ":pbcast.GMS(join_timeout=2000;print_local_addr=false)");
        return c;
    }

    @Test
    void everyStackOnThisHost_listensOnLoopbackOnly_andJoinsNoGroupBeyondLo() throws Exception {
        assumeTrue(SocketAudit.available(), "reads Linux's /proc");
        TransportFixture fixture = JGroupsFixtures.tcp();
        ContractCluster template = new ContractCluster(fixture);
        for (Map.Entry<String, String> config : hostConfigurations().entrySet()) {
            SocketAudit before = SocketAudit.self();
            List<CacheManager> started = new ArrayList<>();
            try {
                CacheManager a = start(started, template.xml("guard-a", config.getValue()));
                CacheManager b = start(started, template.xml("guard-b", config.getValue()));
                ReplicationNode na = ReplicationNode.find(a, fixture.scheme());
                ReplicationNode nb = ReplicationNode.find(b, fixture.scheme());
                Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1,
                        () -> config.getKey() + ": the members did not meet");
                SocketAudit during = SocketAudit.self();
                assertThat(during.violations(before)).as("%s: %s", config.getKey(), during.describe()).isEmpty();
                for (ReplicationNode n : new ReplicationNode[] {na, nb}) {
                    ProtocolStack ps = ((JGroupsTransport) n.transport()).channel().getProtocolStack();
                    TP tp = ps.getTransport();
                    // the audit sees this JVM's sockets: the transport's own is among them
                    int port = ((IpAddress) tp.localPhysicalAddress()).getPort();
                    String proto = tp instanceof UDP ? "udp" : "tcp";
                    assertThat(during.sockets()).as(config.getKey()).anyMatch(s -> s.protocol.equals(proto)
                            && s.port == port && s.address.isLoopbackAddress());
                    assertThat(tp.getDiagnosticsHandler().isRunning()).as("%s: diagnostics", config.getKey())
                            .isFalse();
                    for (Protocol p : ps.getProtocols()) {
                        InetAddress bound = p instanceof FD_SOCK2 ? ((FD_SOCK2) p).getBindAddress()
                                : p instanceof FD_SOCK ? ((FD_SOCK) p).getBindAddress() : null;
                        if (p instanceof FD_SOCK2 || p instanceof FD_SOCK) {
                            assertThat(bound).as("%s: %s", config.getKey(), p.getName()).isNotNull()
                                    .matches(InetAddress::isLoopbackAddress);
                        }
                    }
                }
            } finally {
                for (int i = started.size() - 1; i >= 0; i--) {
                    started.get(i).shutdown();
                }
            }
        }
    }

    @Test
    void theOldModulesDiagnosticsAttributes_areReadAsJGroups5s() {
        List<ProtocolConfiguration> stack = JGroupsStacks.fromConnect("UDP(bind_addr=127.0.0.1;enable_diagnostics=true;"
                + "diagnostics_addr=224.0.75.76;diagnostics_port=7501):PING");
        assertThat(stack.get(0).getProperties()).containsEntry("diag.enabled", "true")
                .containsEntry("diag.mcast_addr", "224.0.75.76").containsEntry("diag.port", "7501")
                .doesNotContainKey("enable_diagnostics");
        assertThat(JGroupsListeners.diagnosticsOffUnlessAsked(stack)).as("asked for").isTrue();
        assertThat(stack.get(0).getProperties()).containsEntry("diag.enabled", "true")
                .as("over TCP, where they can be bound").containsEntry("diag.enable_udp", "false")
                .containsEntry("diag.enable_tcp", "true");
        List<ProtocolConfiguration> udp = JGroupsStacks.fromConnect("UDP(enable_diagnostics=true):PING");
        udp.get(0).getProperties().put("diag.enable_udp", "true");
        JGroupsListeners.diagnosticsOffUnlessAsked(udp);
        assertThat(udp.get(0).getProperties()).as("what the stack says, kept").containsEntry("diag.enable_udp", "true")
                .doesNotContainKey("diag.enable_tcp");
        List<ProtocolConfiguration> quiet = JGroupsStacks.fromConnect("UDP(bind_addr=127.0.0.1):PING");
        assertThat(JGroupsListeners.diagnosticsOffUnlessAsked(quiet)).isFalse();
        assertThat(quiet.get(0).getProperties()).containsEntry("diag.enabled", "false");
    }

    /**
     * On a "host" with a second interface (a namespace with an interface of its own, nothing leaves it): the shipped TCP
     * stack with diagnostics switched back on, run by JGroups alone, joins 224.0.75.75 on that interface and
     * listens on all addresses, and the guard says so; the same stack under ehrelay keeps diagnostics on loopback;
     * the shipped stack bound to the interface's address with a secret listens there and nowhere else.
     */
    @Test
    void onAHostWithAnotherInterface_theGuardCatchesPlainJGroups_andEhrelayListensWhereTold(@TempDir Path dir)
            throws Exception {
        requireNamespaces();
        String shipped;
        try (InputStream in = JGroupsStacks.class.getClassLoader().getResourceAsStream(JGroupsStacks.TCP_STACK)) {
            shipped = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertThat(shipped).contains("diag.enabled=\"false\"");
        Path diagOn = dir.resolve("diag-on.xml");
        Files.writeString(diagOn, shipped.replace("diag.enabled=\"false\"", "diag.enabled=\"true\"")
                .replace("${jgroups.bind_addr:SITE_LOCAL}", "127.0.0.1"));
        Path asShipped = dir.resolve("shipped.xml");
        Files.writeString(asShipped, shipped);
        InetAddress other = InetAddress.getByName("198.18.42.1");
        try (NetNamespace ns = NetNamespace.create("ehr-diag")) {
            ns.innerInterface("d0", "198.18.42.1/24");

            SocketAudit plain = probe(ns, dir.resolve("probes.log"), "plain", diagOn.toString());
            assertThat(plain.violations(null)).as("JGroups alone, diagnostics on: %s", plain.describe())
                    .contains("joined multicast group 224.0.75.75 on d0", "listens on tcp 0.0.0.0:7900") // FD_SOCK2
                    .anyMatch(v -> v.startsWith("receives on udp 0.0.0.0:")); // the diagnostics' answers

            SocketAudit asked = probe(ns, dir.resolve("probes.log"), "ehrelay", diagOn.toString(),
                    "initialHosts=127.0.0.1[7800]");
            assertThat(asked.violations(null)).as("ehrelay, diagnostics asked for: %s", asked.describe()).isEmpty();
            assertThat(asked.sockets()).extracting(Object::toString).as("diagnostics over TCP, on the transport's "
                    + "address; FD_SOCK2 there too").contains("tcp 127.0.0.1:7500", "tcp 127.0.0.1:7900");

            SocketAudit bound = probe(ns, dir.resolve("probes.log"), "ehrelay", asShipped.toString(), "bindAddress=198.18.42.1, "
                    + "initialHosts=198.18.42.1[7800], clusterSecret=" + SECRET);
            assertThat(bound.violations(null, Set.of(other))).as("ehrelay, the shipped stack on the interface's "
                    + "address: %s", bound.describe()).isEmpty();
            assertThat(bound.sockets()).extracting(Object::toString)
                    .contains("tcp 198.18.42.1:7800", "tcp 198.18.42.1:7900").noneMatch(x -> x.contains(":7500"));
        }
    }

    /** Starts a {@link StackProbe} in the namespace, audits it once it is ready, stops it. */
    @SuppressWarnings("try") // stdin is held open (the probe runs until it closes) and closed last
    private static SocketAudit probe(NetNamespace ns, Path log, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-Djava.net.preferIPv4Stack=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"), StackProbe.class.getName()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(ns.exec(cmd)).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        try (OutputStream stdin = p.getOutputStream();
             BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            if (line == null || !line.startsWith("READY ")) {
                fail("the probe did not start (" + String.join(" ", args) + "): " + line + "\n" + Files.readString(log));
            }
            SocketAudit audit = SocketAudit.of(Long.parseLong(line.substring(6).trim()));
            System.out.println(String.join(" ", args) + " -> " + audit.describe());
            assertThat(audit.sockets()).as("the audit sees the probe's transport").anyMatch(s -> s.port == 7800);
            return audit;
        } finally {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    static void requireNamespaces() {
        if (!NetNamespace.available()) {
            if (System.getenv("CI") != null) {
                fail(NetNamespace.unavailableReason());
            }
            assumeTrue(false, NetNamespace.unavailableReason());
        }
    }

    private static CacheManager start(List<CacheManager> started, String xml) {
        CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        started.add(cm);
        return cm;
    }
}
