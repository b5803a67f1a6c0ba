package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Random;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Gadget;
import io.ehrelay.contract.HostileInputs;
import io.ehrelay.contract.Jmx;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.MessageFactory;
import org.jgroups.ObjectMessage;
import org.jgroups.blocks.MessageDispatcher;
import org.jgroups.blocks.RequestOptions;
import org.jgroups.stack.Protocol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A hostile member of the group (no AUTH/ENCRYPT in this stack): relay posts whose batches are hostile, requests
 * that are not ehrelay calls, and a serialized gadget. Each is counted, none touches a cache, and the node keeps
 * replicating with honest members.
 */
@Timeout(240)
class JGroupsHostileInputTest {

    /** The channel of a member the test then uses as the hostile one, once it sees the target. */
    private static JChannel channelOf(ContractCluster cluster, CacheManager member) {
        JChannel ch = ((JGroupsTransport) cluster.node(member).transport()).channel();
        Await.until(() -> ch.getView().size() == 2, () -> "view " + ch.getView());
        return ch;
    }

    private static Address other(JChannel ch) {
        for (Address a : ch.getView().getMembers()) {
            if (!a.equals(ch.getAddress())) {
                return a;
            }
        }
        throw new AssertionError("no other member in " + ch.getView());
    }

    @Test
    void hostileMember_100kHostilePostsAndForeignRequests_eachCountedNoneApplied() throws Exception {
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.tcp())) {
            CacheManager node = cluster.start("target");
            CacheManager vehicle = cluster.start("hostile");
            JChannel ch = channelOf(cluster, vehicle);
            Address target = other(ch);
            // the hostile member talks to the target through its own dispatcher (the vehicle node stops listening)
            MessageDispatcher hostile = new MessageDispatcher(ch);
            Jmx jmx = cluster.jmx(node);
            int n = 100_000;
            HostileInputs.Tally tally = HostileInputs.generate(2026, n, batch -> {
                try {
                    hostile.sendMessage(new BytesMessage(target, batch).putHeader(CallHeader.ID,
                            new CallHeader(CallHeader.POST)), RequestOptions.ASYNC());
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            Await.until(() -> jmx.managerCount("malformedFrames") == n,
                    () -> "malformedFrames " + jmx.managerCount("malformedFrames") + " of " + n);
            // requests without the relay header: refused, counted
            Random random = new Random(5);
            int foreign = 1_000;
            for (int i = 0; i < foreign; i++) {
                byte[] junk = new byte[1 + random.nextInt(100)];
                random.nextBytes(junk);
                hostile.sendMessage(new BytesMessage(target, junk), RequestOptions.ASYNC());
            }
            Await.until(() -> jmx.managerCount("malformedFrames") == n + foreign,
                    () -> "malformedFrames " + jmx.managerCount("malformedFrames") + " of " + (n + foreign));
            System.out.printf("[jgroups] fuzz from a hostile member: %s as relay posts, plus %d foreign requests; all "
                    + "counted in malformedFrames%n", tally, foreign);
            for (String cache : node.getCacheNames()) {
                assertThat(node.getCache(cache).getSize()).as(cache).isZero();
            }
            hostile.close();
            cluster.stop(vehicle);
            // an honest member still replicates with the target
            CacheManager honest = cluster.start("honest");
            honest.getCache("async").put(new Element("after", "fuzz"));
            Await.until(() -> node.getCache("async").get("after") != null, () -> "the node stopped replicating");
        }
    }

    @Test
    void hostileMember_serializedGadget_doesNotRunOnTheNode() throws Exception {
        Gadget.readObjectRan = false;
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.tcp())) {
            CacheManager node = cluster.start("target");
            CacheManager vehicle = cluster.start("hostile");
            JChannel ch = channelOf(cluster, vehicle);
            Address target = other(ch);
            Jmx jmx = cluster.jmx(node);
            long before = jmx.managerGauge("serializedObjectsRefused").longValue();
            // JGroups would deserialize these while reading them off the wire, before any protocol or ehrelay
            ch.send(new ObjectMessage(target, new Gadget("x")));
            MessageDispatcher hostile = new MessageDispatcher(ch);
            hostile.sendMessage(new ObjectMessage(target, new Gadget("y")).putHeader(CallHeader.ID,
                    new CallHeader(CallHeader.POST)), RequestOptions.ASYNC());
            // (this JVM's two nodes share the guard's count: the hostile side refuses nothing it sends)
            Await.until(() -> jmx.managerGauge("serializedObjectsRefused").longValue() - before >= 2,
                    () -> "refused " + (jmx.managerGauge("serializedObjectsRefused").longValue() - before));
            assertThat(Gadget.readObjectRan).as("the gadget's readObject ran on the node").isFalse();
            hostile.close();
            cluster.stop(vehicle);
            // JGroups' own object messages (digests, retransmission lists) still flow: replication works
            CacheManager honest = cluster.start("honest");
            honest.getCache("async").put(new Element("after", "gadget"));
            Await.until(() -> node.getCache("async").get("after") != null, () -> "the node stopped replicating");
        }
    }

    /**
     * Protocols that read messages again from arrays (FRAG4 putting fragments together, Encrypt, COMPRESS) use the
     * guarded readers too. With JGroups 5.3/5.4 they copy the transport's message factory while the channel is
     * built, before ehrelay puts its own in place; with 5.5 there is one table for the JVM.
     */
    @Test
    void protocolsThatReadMessagesAgain_useTheGuardedReaders() throws Exception {
        try (ContractCluster cluster = new ContractCluster(JGroupsFixtures.tcp())) {
            CacheManager node = cluster.start("target");
            JChannel ch = ((JGroupsTransport) cluster.node(node).transport()).channel();
            if (!ObjectMessageGuard.perChannel()) {
                assertThat(MessageFactory.class.getMethod("create", short.class)
                        .invoke(null, Message.OBJ_MSG)).isInstanceOf(ObjectMessageGuard.Guarded.class);
                return;
            }
            Object guarded = ch.getProtocolStack().getTransport().getMessageFactory();
            assertThat(guarded).isInstanceOf(GuardedMessageFactory.class);
            int fields = 0;
            for (Protocol p : ch.getProtocolStack().getProtocols()) {
                for (Class<?> c = p.getClass(); c != Object.class; c = c.getSuperclass()) {
                    for (Field f : c.getDeclaredFields()) {
                        if (f.getType().getName().equals("org.jgroups.MessageFactory")
                                && !Modifier.isStatic(f.getModifiers())) {
                            f.setAccessible(true);
                            assertThat(f.get(p)).as("%s.%s", p.getName(), f.getName()).isSameAs(guarded);
                            fields++;
                        }
                    }
                }
            }
            assertThat(fields).as("message factories in the stack (TCP, FRAG4)").isGreaterThanOrEqualTo(2);
        }
    }
}
