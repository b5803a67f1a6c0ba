package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.jgroups.BytesMessage;
import org.jgroups.Event;
import org.jgroups.JChannel;
import org.jgroups.Version;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.UnicastHeader3;
import org.jgroups.stack.IpAddress;
import org.jgroups.util.UUID;
import org.jgroups.util.Util;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A process that is not a member sends a node unicasts that UNICAST3 would keep (data messages that are not the
 * first of their connection, from a sender it does not know): on a stack without authentication, the node drops
 * them ({@link OutsiderGuard}), large and small, holds nothing of them, and its members still replicate.
 */
@Timeout(120)
class JGroupsOutsiderTest {

    private static long usedMb() {
        for (int i = 0; i < 3; i++) {
            System.gc();
        }
        Runtime r = Runtime.getRuntime();
        return (r.totalMemory() - r.freeMemory()) >> 20;
    }

    @Test
    void largeUnicastsFromOutsideTheView_areDroppedAndCounted_notKept() throws Exception {
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.tcp())) {
            CacheManager node = cluster.start("target");
            CacheManager honest = cluster.start("honest");
            Jmx jmx = cluster.jmx(node);
            long rejected = jmx.managerCount("rejected");
            JChannel ch = ((JGroupsTransport) cluster.node(node).transport()).channel();
            int port = ((IpAddress) ch.down(new Event(Event.GET_PHYSICAL_ADDRESS,
                    ch.getAddress()))).getPort();
            long before = usedMb();
            short id = ClassConfigurator.getProtocolId(UNICAST3.class);
            UUID outsider = UUID.randomUUID();
            int n = 20;
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream()));
                IpAddress claimed = new IpAddress("127.0.0.1", 3999);
                out.write(new byte[] {'b', 'e', 'l', 'a'});
                out.writeShort(Version.version);
                out.writeShort(claimed.serializedSize());
                claimed.writeTo(out);
                for (int i = 0; i < 2 * n; i++) {
                    // n of 4 MB, then n of 1 KB: UNICAST3 would keep either, the small ones too
                    byte[] payload = new byte[i < n ? 4 << 20 : 1024];
                    BytesMessage m = new BytesMessage(ch.getAddress(), payload);
                    m.setSrc(outsider);
                    m.putHeader(id, UnicastHeader3.createDataHeader(10 + i, (short) 1, false));
                    ByteArrayOutputStream b = new ByteArrayOutputStream();
                    Util.writeMessage(m, new DataOutputStream(b), false);
                    out.writeInt(b.size());
                    b.writeTo(out);
                    out.flush();
                }
                Await.until(() -> jmx.managerCount("rejected") - rejected == 2 * n,
                        () -> "rejected +" + (jmx.managerCount("rejected") - rejected) + " of " + 2 * n);
            }
            long after = usedMb();
            System.out.printf("[jgroups] %d unicasts of 4 MB and %1$d of 1 KB from a never-member: rejected +%d, heap "
                    + "%d -> %d MB%n",
                    n, jmx.managerCount("rejected") - rejected, before, after);
            assertThat(after - before).as("MB held after %d x 4 MB from an outsider", n).isLessThan(40);
            honest.getCache("async").put(new Element("after", new byte[200_000]));
            Await.until(() -> node.getCache("async").get("after") != null, () -> "the members stopped replicating");
        }
    }
}
