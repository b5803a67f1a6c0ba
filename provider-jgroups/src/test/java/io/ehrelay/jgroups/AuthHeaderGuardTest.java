package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.jgroups.EmptyMessage;
import org.jgroups.Event;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.Version;
import org.jgroups.auth.AuthToken;
import org.jgroups.auth.FixedMembershipToken;
import org.jgroups.auth.RegexMembership;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.AUTH;
import org.jgroups.protocols.AuthHeader;
import org.jgroups.protocols.PingHeader;
import org.jgroups.protocols.TCPPING;
import org.jgroups.stack.IpAddress;
import org.jgroups.util.UUID;
import org.jgroups.util.Util;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An outsider names any class in an AUTH header and JGroups would construct it while reading the message, before
 * any protocol looks at it: {@link AuthHeaderGuard} constructs only the token classes of this JVM's stacks.
 */
@Timeout(120)
class AuthHeaderGuardTest {

    /** A class an attacker names: counts its constructions (what a gadget's constructor would do instead). */
    public static final class Canary extends AuthToken {
        static final AtomicInteger CONSTRUCTED = new AtomicInteger();

        public Canary() {
            CONSTRUCTED.incrementAndGet();
        }

        @Override
        public String getName() {
            return "canary";
        }

        @Override
        public int size() {
            return 0;
        }

        @Override
        public boolean authenticate(AuthToken token, Message msg) {
            return true;
        }

        @Override
        public void writeTo(DataOutput out) {
        }

        @Override
        public void readFrom(DataInput in) {
        }
    }

    private static byte[] headerNaming(AuthToken token) throws Exception {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        new AuthHeader(token).writeTo(new DataOutputStream(b));
        return b.toByteArray();
    }

    @Test
    void aTokenClassNamedOnTheWire_isConstructedByJGroups_butNotByTheGuard() throws Exception {
        byte[] wire = headerNaming(new Canary());
        int before = Canary.CONSTRUCTED.get();
        new AuthHeader().readFrom(new DataInputStream(new ByteArrayInputStream(wire)));
        assertThat(Canary.CONSTRUCTED.get()).as("JGroups' own reader constructs the named class").isEqualTo(before + 1);

        long refused = ObjectMessageGuard.REFUSED.get();
        assertThatThrownBy(() -> new AuthHeaderGuard.Guarded().readFrom(new DataInputStream(new ByteArrayInputStream(wire))))
                .hasMessageContaining("refused an AUTH header naming class " + Canary.class.getName());
        assertThat(Canary.CONSTRUCTED.get()).as("the guard constructed nothing").isEqualTo(before + 1);
        assertThat(ObjectMessageGuard.REFUSED.get()).isEqualTo(refused + 1);
    }

    @Test
    void theTokensOfThisJvmsStacks_andTokensJGroupsNumbers_areRead() throws Exception {
        // a token JGroups registers by number: read as before
        FixedMembershipToken fixed = new FixedMembershipToken();
        AuthHeaderGuard.Guarded h = new AuthHeaderGuard.Guarded();
        h.readFrom(new DataInputStream(new ByteArrayInputStream(headerNaming(fixed))));
        assertThat(h.getToken()).isInstanceOf(FixedMembershipToken.class);
        // a stack with AUTH naming its token: that class is read
        String regex = RegexMembership.class.getName();
        byte[] named = headerNaming(new RegexMembership());
        assertThatThrownBy(() -> new AuthHeaderGuard.Guarded().readFrom(new DataInputStream(
                new ByteArrayInputStream(named)))).as("before a stack names it").hasMessageContaining(regex);
        AuthHeaderGuard.allowTokensOf(JGroupsStacks.fromConnect("TCP(bind_addr=127.0.0.1):TCPPING:pbcast.NAKACK2:"
                + "UNICAST3:pbcast.GMS:AUTH(auth_class=" + regex + ")"));
        AuthHeaderGuard.Guarded m = new AuthHeaderGuard.Guarded();
        m.readFrom(new DataInputStream(new ByteArrayInputStream(named)));
        assertThat(m.getToken()).isInstanceOf(RegexMembership.class);
    }

    /** Real nodes with a secret; an outsider's discovery request carries the header: nothing is constructed. */
    @Test
    void anOutsidersDiscoveryRequest_namingAClass_constructsNothingOnTheNodes() throws Exception {
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.tcp(", clusterSecret=auth-guard-test-secret-0123"))) {
            CacheManager node = cluster.start("target");
            CacheManager honest = cluster.start("honest");
            JChannel ch = ((JGroupsTransport) cluster.node(node).transport()).channel();
            int port = ((IpAddress) ch.down(new Event(Event.GET_PHYSICAL_ADDRESS,
                    ch.getAddress()))).getPort();
            Canary token = new Canary();
            int constructed = Canary.CONSTRUCTED.get();
            long refused = ObjectMessageGuard.REFUSED.get();
            short ping = ClassConfigurator.getProtocolId(TCPPING.class);
            short auth = ClassConfigurator.getProtocolId(AUTH.class);
            int n = 5;
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
                IpAddress claimed = new IpAddress("127.0.0.1", 3998);
                out.write(new byte[] {'b', 'e', 'l', 'a'});
                out.writeShort(Version.version);
                out.writeShort(claimed.serializedSize());
                claimed.writeTo(out);
                for (int i = 0; i < n; i++) {
                    EmptyMessage m = new EmptyMessage(null);
                    m.setSrc(UUID.randomUUID());
                    m.putHeader(ping, new PingHeader(PingHeader.GET_MBRS_REQ).clusterName("any"));
                    m.putHeader(auth, new AuthHeader(token));
                    ByteArrayOutputStream b = new ByteArrayOutputStream();
                    Util.writeMessage(m, new DataOutputStream(b), true);
                    out.writeInt(b.size());
                    b.writeTo(out);
                    out.flush();
                }
                Await.until(() -> ObjectMessageGuard.REFUSED.get() - refused >= n,
                        () -> "refused +" + (ObjectMessageGuard.REFUSED.get() - refused) + " of " + n);
            }
            assertThat(Canary.CONSTRUCTED.get()).as("constructions of the named class on the nodes")
                    .isEqualTo(constructed);
            honest.getCache("async").put(new Element("after", "v"));
            Await.until(() -> node.getCache("async").get("after") != null, () -> "the members stopped replicating");
        }
    }
}
