package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Field;
import java.util.List;
import java.util.Properties;
import java.util.stream.Collectors;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import org.jgroups.JChannel;
import org.jgroups.Version;
import org.jgroups.conf.ProtocolConfiguration;
import org.jgroups.util.Util;
import org.junit.jupiter.api.Test;

/** Building the channel's stack: the old module's inline JGroups 3 stacks, the shipped files, the overrides. */
class JGroupsStacksTest {

    /** The UDP stack of the old module's documentation (JGroups 3 protocols and attributes). */
    static final String OLD_UDP = "UDP(mcast_addr=231.12.21.132;mcast_port=45566;ip_ttl=32;"
            + "mcast_send_buf_size=150000;mcast_recv_buf_size=80000):"
            + "PING(timeout=2000;num_initial_members=6):"
            + "MERGE2(min_interval=5000;max_interval=10000):"
            + "FD_SOCK:VERIFY_SUSPECT(timeout=1500):"
            + "pbcast.NAKACK(retransmit_timeout=3000):"
            + "UNICAST(timeout=5000):"
            + "pbcast.STABLE(desired_avg_gossip=20000):"
            + "FRAG:"
            + "pbcast.GMS(join_timeout=5000;print_local_addr=true)";

    /** The TCP stack of the old module's documentation. */
    static final String OLD_TCP = "TCP(bind_port=7800):"
            + "TCPPING(initial_hosts=HostA[7800],HostB[7800];port_range=10;timeout=3000;num_initial_members=3):"
            + "VERIFY_SUSPECT(timeout=1500):"
            + "pbcast.NAKACK(use_mcast_xmit=false;gc_lag=100;retransmit_timeout=300,600,1200,2400,4800;"
            + "discard_delivered_msgs=true):"
            + "pbcast.STABLE(stability_delay=1000;desired_avg_gossip=50000;max_bytes=400000):"
            + "pbcast.GMS(print_local_addr=true;join_timeout=5000;shun=false;view_bundling=true)";

    private static JGroupsSettings settings(Properties p) {
        PropertyReader r = new PropertyReader("test", p);
        return JGroupsSettings.read(r, NodeConfig.read(r, null));
    }

    private static List<String> names(List<ProtocolConfiguration> stack) {
        return stack.stream().map(ProtocolConfiguration::getProtocolName).collect(Collectors.toList());
    }

    @Test
    void oldUdpStack_isTranslatedToJGroups5() {
        List<ProtocolConfiguration> stack = JGroupsStacks.fromConnect(OLD_UDP);
        assertThat(names(stack)).containsExactly("UDP", "PING", "MERGE3", "FD_SOCK", "VERIFY_SUSPECT",
                "pbcast.NAKACK2", "UNICAST3", "pbcast.STABLE", "FRAG", "pbcast.GMS");
        assertThat(stack.get(0).getProperties()).containsEntry("mcast_addr", "231.12.21.132")
                .containsEntry("mcast_port", "45566").containsEntry("ip_ttl", "32")
                .containsEntry("mcast_send_buf_size", "150000");
        // JGroups 5 PING has neither attribute; NAKACK2 has no retransmit_timeout
        assertThat(stack.get(1).getProperties()).isEmpty();
        assertThat(stack.get(5).getProperties()).isEmpty();
        assertThat(stack.get(9).getProperties()).containsEntry("join_timeout", "5000")
                .containsEntry("print_local_addr", "true");
    }

    @Test
    void oldTcpStack_getsUnicastAndFragmentation() {
        List<ProtocolConfiguration> stack = JGroupsStacks.fromConnect(OLD_TCP);
        assertThat(names(stack)).containsExactly("TCP", "TCPPING", "VERIFY_SUSPECT", "pbcast.NAKACK2", "UNICAST3",
                "pbcast.STABLE", "pbcast.GMS", "FRAG4");
        assertThat(stack.get(1).getProperties()).containsEntry("initial_hosts", "HostA[7800],HostB[7800]")
                .containsEntry("port_range", "10").doesNotContainKey("num_initial_members");
        assertThat(stack.get(3).getProperties()).containsEntry("use_mcast_xmit", "false")
                .doesNotContainKeys("gc_lag", "retransmit_timeout");
        assertThat(stack.get(6).getProperties()).doesNotContainKeys("shun");
    }

    @Test
    void unknownProtocolsAndBrokenSyntax_failNamingThePart() {
        assertThatThrownBy(() -> JGroupsStacks.fromConnect("UDP:NO_SUCH_PROTOCOL(x=1)"))
                .hasMessageContaining("NO_SUCH_PROTOCOL");
        assertThatThrownBy(() -> JGroupsStacks.fromConnect("UDP(mcast_port=1:PING"))
                .hasMessageContaining("unbalanced");
        assertThatThrownBy(() -> JGroupsStacks.fromConnect("UDP(mcast_port):PING"))
                .hasMessageContaining("mcast_port");
    }

    @Test
    void shippedStacks_loadAndTakeTheAddressOverrides() throws Exception {
        Properties p = new Properties();
        p.setProperty("file", JGroupsStacks.TCP_STACK);
        p.setProperty("bindAddress", "127.0.0.1");
        p.setProperty("bindPort", "7900");
        p.setProperty("initialHosts", "127.0.0.1[7900]|127.0.0.1[7901]");
        List<ProtocolConfiguration> tcp = JGroupsStacks.build(settings(p));
        assertThat(names(tcp)).startsWith("TCP", "TCPPING").contains("UNICAST3", "FRAG4");
        assertThat(tcp.get(0).getProperties()).containsEntry("bind_addr", "127.0.0.1").containsEntry("bind_port", "7900");
        assertThat(tcp.get(1).getProperties()).containsEntry("initial_hosts", "127.0.0.1[7900],127.0.0.1[7901]");

        Properties u = new Properties();
        u.setProperty("multicastAddress", "230.0.0.7");
        u.setProperty("timeToLive", "0");
        List<ProtocolConfiguration> udp = JGroupsStacks.build(settings(u));
        assertThat(names(udp)).startsWith("UDP", "PING");
        assertThat(udp.get(0).getProperties()).containsEntry("mcast_addr", "230.0.0.7").containsEntry("ip_ttl", "0");

        Properties wrong = new Properties();
        wrong.setProperty("file", JGroupsStacks.TCP_STACK);
        wrong.setProperty("multicastPort", "45000");
        assertThatThrownBy(() -> JGroupsStacks.build(settings(wrong)))
                .hasMessageContaining("UDP stack");
    }

    @Test
    void aDnsName_withoutAStack_takesTheShippedDnsStack_andItsQuery() throws Exception {
        Properties p = new Properties();
        p.setProperty("dnsName", "ehrelay.default.svc.cluster.local");
        List<ProtocolConfiguration> dns = JGroupsStacks.build(settings(p));
        assertThat(names(dns)).startsWith("TCP", "dns.DNS_PING").contains("FD_SOCK2", "UNICAST3", "FRAG4")
                .doesNotContain("TCPPING");
        assertThat(dns.get(0).getProperties()).containsEntry("diag.enabled", "false");
        assertThat(dns.get(1).getProperties()).containsEntry("dns_query", "ehrelay.default.svc.cluster.local")
                .containsEntry("dns_record_type", "A");
        JGroupsStacks.checkFragmentsFitCredits(dns);

        p.setProperty("dnsName", "_ehrelay._tcp.ehrelay.default.svc.cluster.local");
        assertThat(JGroupsStacks.build(settings(p)).get(1).getProperties()).containsEntry("dns_record_type", "SRV");

        Properties withTcpping = new Properties();
        withTcpping.setProperty("file", JGroupsStacks.TCP_STACK);
        withTcpping.setProperty("dnsName", "peers");
        assertThatThrownBy(() -> JGroupsStacks.build(settings(withTcpping)))
                .hasMessageContaining("dnsName needs a stack with DNS_PING").hasMessageContaining(JGroupsStacks.DNS_STACK);
    }

    @Test
    void shippedTcpStack_sendsADefaultBatchWhole() throws Exception {
        List<ProtocolConfiguration> tcp = JGroupsStacks.fromFile(JGroupsStacks.TCP_STACK);
        ProtocolConfiguration frag = tcp.stream().filter(p -> p.getProtocolName().equals("FRAG4")).findFirst()
                .orElseThrow();
        long fragSize = Util.readBytesLong(frag.getProperties().get("frag_size"));
        // a batch of batchMaxBytes' default (1 MB) plus its headers is one message, not reassembled from pieces
        assertThat(fragSize).isGreaterThan((1L << 20) + 64 * 1024);
        JGroupsStacks.checkFragmentsFitCredits(tcp);
    }

    @Test
    void fragmentsLargerThanFlowControlCredits_areRefused() throws Exception {
        String stack = "TCP(bind_port=7800):TCPPING(initial_hosts=127.0.0.1[7800]):pbcast.NAKACK2:UNICAST3:"
                + "pbcast.STABLE:pbcast.GMS:UFC(max_credits=1M):MFC:FRAG4(frag_size=2M)";
        Properties p = new Properties();
        p.setProperty("connect", stack);
        assertThatThrownBy(() -> JGroupsStacks.build(settings(p)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("FRAG4 frag_size (2000000 bytes)")
                .hasMessageContaining("UFC max_credits (1000000 bytes)");

        // MFC's default (5 MB) against a 6 MB fragment
        p.setProperty("connect", stack.replace("UFC(max_credits=1M)", "UFC(max_credits=8M)")
                .replace("frag_size=2M", "frag_size=6M"));
        assertThatThrownBy(() -> JGroupsStacks.build(settings(p)))
                .hasMessageContaining("MFC max_credits (5000000 bytes)");

        p.setProperty("connect", stack.replace("UFC(max_credits=1M)", "UFC(max_credits=4M)"));
        assertThat(names(JGroupsStacks.build(settings(p)))).contains("FRAG4");
    }

    @Test
    void aTcpTransport_sendsToEachMemberFromItsOwnThread_soAVanishedMemberStallsNoOther() throws Exception {
        boolean option = Version.major > 5 || Version.major == 5 && Version.minor >= 4;
        assertThat(JGroupsStacks.singleSenderOption()).as("JGroups %s", Version.printVersion())
                .isEqualTo(option);

        List<ProtocolConfiguration> tcp = JGroupsStacks.fromFile(JGroupsStacks.TCP_STACK);
        assertThat(JGroupsStacks.senderPerMember(tcp, true)).isTrue();
        assertThat(tcp.get(0).getProperties()).containsEntry(JGroupsStacks.SINGLE_SENDER, "false");
        assertThat(JGroupsStacks.senderPerMember(JGroupsStacks.fromFile(JGroupsStacks.TCP_STACK), false))
                .as("a JGroups without the option (5.3: a thread per member already)").isFalse();
        // what a stack says itself, another bundler, a transport that connects to nobody: left as they are
        List<ProtocolConfiguration> said = JGroupsStacks.fromFile(JGroupsStacks.DNS_STACK);
        said.get(0).getProperties().put(JGroupsStacks.SINGLE_SENDER, "true");
        assertThat(JGroupsStacks.senderPerMember(said, true)).isFalse();
        assertThat(said.get(0).getProperties()).containsEntry(JGroupsStacks.SINGLE_SENDER, "true");
        List<ProtocolConfiguration> queue = JGroupsStacks.fromFile(JGroupsStacks.TCP_STACK);
        queue.get(0).getProperties().put("bundler_type", "transfer-queue");
        assertThat(JGroupsStacks.senderPerMember(queue, true)).isFalse();
        assertThat(JGroupsStacks.senderPerMember(JGroupsStacks.fromFile(JGroupsStacks.UDP_STACK), true)).isFalse();

        // the provider's own build of the DNS stack, on a channel: the bundler JGroups made has a thread per member
        Properties p = new Properties();
        p.setProperty("dnsName", "ehrelay-peers.invalid");
        p.setProperty("bindAddress", "127.0.0.1");
        List<ProtocolConfiguration> built = JGroupsStacks.build(settings(p));
        assertThat(built.get(0).getProperties().get(JGroupsStacks.SINGLE_SENDER)).isEqualTo(option ? "false" : null);
        if (option) {
            try (JChannel channel = new JChannel(JGroupsStacks.configurator(built))) {
                Object bundler = channel.getProtocolStack().getTransport().getBundler();
                Field single = Class.forName("org.jgroups.protocols.BaseBundler")
                        .getDeclaredField("use_single_sender_thread");
                single.setAccessible(true);
                assertThat(single.getBoolean(bundler)).as(bundler.getClass().getName()).isFalse();
            }
        }
    }
}
