package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.internal.engine.ReplicationNode;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.jgroups.JChannel;
import org.jgroups.conf.ProtocolConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Secure by default on JGroups, which cannot refuse a host where it listens: a node whose members do not
 * authenticate (no {@code clusterSecret}, no AUTH or encryption in the stack) and whose {@code unauthenticatedPeers}
 * admits only this host listens on loopback. The shipped stacks' {@code SITE_LOCAL} default becomes 127.0.0.1; a
 * non-loopback address chosen explicitly is refused at start, naming what to set.
 */
@Timeout(120)
class JGroupsProtectedByDefaultTest {

    private static JGroupsSettings settings(String... kv) {
        Properties p = new Properties();
        for (int i = 0; i < kv.length; i += 2) {
            p.setProperty(kv[i], kv[i + 1]);
        }
        PropertyReader r = new PropertyReader("test", p);
        return JGroupsSettings.read(r, NodeConfig.read(r, null));
    }

    private static String keep(List<ProtocolConfiguration> stack, JGroupsSettings s) throws Exception {
        return StackExposure.keepOnThisHost(stack, s);
    }

    @Test
    void theShippedStacksDefault_becomesLoopback() throws Exception {
        for (String file : new String[] {JGroupsStacks.TCP_STACK, JGroupsStacks.UDP_STACK}) {
            JGroupsSettings s = settings("file", file);
            List<ProtocolConfiguration> stack = JGroupsStacks.build(s);
            assertThat(stack.get(0).getProperties().get("bind_addr")).contains("SITE_LOCAL");
            assertThat(keep(stack, s)).as(file).isEqualTo("SITE_LOCAL");
            assertThat(InetAddress.getByName(stack.get(0).getProperties().get("bind_addr")).isLoopbackAddress())
                    .isTrue();
        }
        // a stack without bind_addr: JGroups would pick an interface's address
        JGroupsSettings none = settings("connect", "TCP(bind_port=7800):TCPPING(initial_hosts=127.0.0.1[7800])");
        List<ProtocolConfiguration> stack = JGroupsStacks.build(none);
        assertThat(keep(stack, none)).isEqualTo("JGroups' default");
        assertThat(InetAddress.getByName(stack.get(0).getProperties().get("bind_addr")).isLoopbackAddress()).isTrue();
    }

    @Test
    void aLoopbackAddress_isKept() throws Exception {
        JGroupsSettings s = settings("file", JGroupsStacks.TCP_STACK, "bindAddress", "127.0.0.1");
        List<ProtocolConfiguration> stack = JGroupsStacks.build(s);
        assertThat(keep(stack, s)).isNull();
        JGroupsSettings local = settings("connect", "UDP(bind_addr=localhost;ip_ttl=0):PING");
        assertThat(keep(JGroupsStacks.build(local), local)).isNull();
    }

    @Test
    void anotherAddressChosenExplicitly_isRefused_namingWhatToSet() throws Exception {
        // 192.0.2.1 (TEST-NET): refused before JGroups would bind it
        JGroupsSettings property = settings("file", JGroupsStacks.TCP_STACK, "bindAddress", "192.0.2.1");
        assertThatThrownBy(() -> keep(JGroupsStacks.build(property), property))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("192.0.2.1 (bindAddress=192.0.2.1)")
                .hasMessageContaining("clusterSecret").hasMessageContaining("unauthenticatedPeers");
        JGroupsSettings attribute = settings("connect", "UDP(bind_addr=192.0.2.1;ip_ttl=0):PING");
        assertThatThrownBy(() -> keep(JGroupsStacks.build(attribute), attribute))
                .hasMessageContaining("UDP bind_addr=\"192.0.2.1\"");
    }

    @Test
    void stacksThatAuthenticate_areRecognised() throws Exception {
        assertThat(StackExposure.authenticates(JGroupsStacks.fromFile(JGroupsStacks.TCP_STACK))).isFalse();
        assertThat(StackExposure.authenticates(JGroupsStacks.fromConnect(
                "TCP(bind_addr=127.0.0.1):TCPPING(initial_hosts=127.0.0.1[7800]):ENCRYPT:pbcast.NAKACK2:UNICAST3")))
                .as("the old module's ENCRYPT, translated to SYM_ENCRYPT").isTrue();
        assertThat(StackExposure.authenticates(JGroupsStacks.fromConnect(
                "TCP(bind_addr=127.0.0.1):TCPPING(initial_hosts=127.0.0.1[7800]):pbcast.NAKACK2:UNICAST3:"
                        + "pbcast.GMS:AUTH(auth_class=org.jgroups.auth.MD5Token)"))).isTrue();
    }

    @Test
    void tcppingHostsElsewhere_areRefused_multicastIsWarnedAbout() throws Exception {
        assertThat(StackExposure.discoversOtherHosts(JGroupsStacks.fromFile(JGroupsStacks.UDP_STACK))).isTrue();
        assertThat(StackExposure.discoversOtherHosts(JGroupsStacks.fromFile(JGroupsStacks.TCP_STACK))).isFalse();
        assertThat(StackExposure.tcppingHostsElsewhere(JGroupsStacks.fromConnect(
                "TCP:TCPPING(initial_hosts=localhost[7800],127.0.0.1[7801])"))).isEmpty();
        assertThat(StackExposure.tcppingHostsElsewhere(JGroupsStacks.fromConnect(
                "TCP:TCPPING(initial_hosts=127.0.0.1[7800],10.0.0.2[7800],db-2[7800])")))
                .as("names are not resolved: they count as other hosts").containsExactly("10.0.0.2", "db-2");
        JGroupsSettings s = settings("file", JGroupsStacks.TCP_STACK, "bindAddress", "127.0.0.1",
                "initialHosts", "127.0.0.1[7800]|10.0.0.2[7800]");
        assertThatThrownBy(() -> keep(JGroupsStacks.build(s), s))
                .hasMessageContaining("TCPPING lists members on other hosts (10.0.0.2)")
                .hasMessageContaining("clusterSecret");
    }

    /** JGroups binds its system property's address over the stack's attribute: so does the check. */
    @Test
    void theSystemProperty_countsAsJGroupsReadsIt_beforeTheStacksAttribute() throws Exception {
        String before = System.getProperty("jgroups.bind_addr");
        try {
            System.setProperty("jgroups.bind_addr", "127.0.0.1");
            // JGroups binds the property's 127.0.0.1, whatever the attribute says: kept
            JGroupsSettings attribute = settings("connect", "UDP(bind_addr=192.0.2.1;ip_ttl=0):PING");
            assertThat(keep(JGroupsStacks.build(attribute), attribute)).isNull();
            JGroupsSettings shipped = settings("file", JGroupsStacks.TCP_STACK);
            assertThat(keep(JGroupsStacks.build(shipped), shipped)).isNull();

            System.setProperty("jgroups.bind_addr", "192.0.2.1");
            // bindAddress=127.0.0.1 goes into the attribute, but JGroups would bind the property's address
            JGroupsSettings loopback = settings("file", JGroupsStacks.TCP_STACK, "bindAddress", "127.0.0.1");
            assertThatThrownBy(() -> keep(JGroupsStacks.build(loopback), loopback))
                    .hasMessageContaining("JGroups would listen on 192.0.2.1 (-Djgroups.bind_addr=192.0.2.1)");
            assertThatThrownBy(() -> keep(JGroupsStacks.build(shipped), shipped))
                    .hasMessageContaining("JGroups would listen on 192.0.2.1");
        } finally {
            if (before == null) {
                System.clearProperty("jgroups.bind_addr");
            } else {
                System.setProperty("jgroups.bind_addr", before);
            }
        }
        // another application server's way of naming the default (no property set): still a default
        JGroupsSettings other = settings("connect",
                "TCP(bind_addr=${jgroups.bind.address,jgroups.bind_addr:SITE_LOCAL}):TCPPING(initial_hosts=127.0.0.1[7800])");
        List<ProtocolConfiguration> stack = JGroupsStacks.build(other);
        assertThat(keep(stack, other)).isEqualTo("SITE_LOCAL");
        assertThat(InetAddress.getByName(stack.get(0).getProperties().get("bind_addr")).isLoopbackAddress()).isTrue();
    }

    /** What JGroups really binds with the property and another attribute set: the property's address. */
    @Test
    void jgroupsItself_bindsTheSystemPropertysAddress_overTheAttribute() throws Exception {
        String before = System.getProperty("jgroups.bind_addr");
        try {
            System.setProperty("jgroups.bind_addr", "127.0.0.2");
            // built, not connected: nothing listens
            JChannel ch = new JChannel(
                    new ByteArrayInputStream(("<config xmlns=\"urn:org:jgroups\"><TCP bind_addr=\"127.0.0.1\" "
                            + "bind_port=\"7801\" diag.enabled=\"false\"/><TCPPING initial_hosts=\"127.0.0.1[7800]\"/>"
                            + "<pbcast.NAKACK2/><UNICAST3/><pbcast.GMS/></config>").getBytes(StandardCharsets.UTF_8)));
            try {
                assertThat(ch.getProtocolStack().getTransport().getBindAddress().getHostAddress())
                        .isEqualTo("127.0.0.2");
            } finally {
                ch.close();
            }
        } finally {
            if (before == null) {
                System.clearProperty("jgroups.bind_addr");
            } else {
                System.setProperty("jgroups.bind_addr", before);
            }
        }
    }

    @Test
    void jgroupsTlsWithClientCertificates_authenticates() throws Exception {
        List<ProtocolConfiguration> tls = JGroupsStacks.fromConnect("TCP(tls.enabled=true;tls.client_auth=NEED)"
                + ":TCPPING(initial_hosts=127.0.0.1[7800])");
        assertThat(StackExposure.authenticates(tls)).isTrue();
        List<ProtocolConfiguration> encryptOnly = JGroupsStacks.fromConnect("TCP(tls.enabled=true;tls.client_auth=NONE)"
                + ":TCPPING(initial_hosts=127.0.0.1[7800])");
        assertThat(StackExposure.authenticates(encryptOnly)).as("TLS without client certificates").isFalse();
    }

    /** Real nodes: the shipped TCP stack without bindAddress listens on loopback and replicates there. */
    @Test
    void nodesWithTheDefaultAddress_listenOnLoopback_andReplicate() throws Exception {
        TransportFixture fixture = JGroupsFixtures.tcp();
        ContractCluster template = new ContractCluster(fixture);
        String properties = fixture.extraProviderProperties().replace("bindAddress=127.0.0.1, ", "");
        assertThat(properties).doesNotContain("bindAddress").contains("initialHosts=127.0.0.1[");
        List<CacheManager> started = new ArrayList<>();
        try {
            CacheManager a = start(started, template.xml("dflt-a", properties));
            CacheManager b = start(started, template.xml("dflt-b", properties));
            ReplicationNode na = ReplicationNode.find(a, fixture.scheme());
            ReplicationNode nb = ReplicationNode.find(b, fixture.scheme());
            for (ReplicationNode n : new ReplicationNode[] {na, nb}) {
                InetAddress bound = ((JGroupsTransport) n.transport()).channel().getProtocolStack().getTransport()
                        .getBindAddress();
                assertThat(bound.isLoopbackAddress()).as("bound to %s", bound).isTrue();
            }
            Await.until(() -> na.peers().size() == 1 && nb.peers().size() == 1, () -> "a and b did not meet");
            a.getEhcache("async").put(new Element("k", "v"));
            Await.until(() -> b.getEhcache("async").get("k") != null, () -> "not replicated");

            // an address of another host, chosen explicitly without a secret: the CacheManager does not start
            assertThatThrownBy(() -> start(started, template.xml("dflt-c", properties + ", bindAddress=192.0.2.1")))
                    .hasStackTraceContaining("clusterSecret");
        } finally {
            for (int i = started.size() - 1; i >= 0; i--) {
                started.get(i).shutdown();
            }
        }
    }

    private static CacheManager start(List<CacheManager> started, String xml) {
        CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        started.add(cm);
        return cm;
    }
}
