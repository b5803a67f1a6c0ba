package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Gadget;
import io.ehrelay.contract.HostileInputs;
import io.ehrelay.contract.Jmx;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.SetBombs;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;
import net.sf.ehcache.distribution.RmiEventMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile calls to every remote object an ehrelay RMI node exports: its registry, the stock-compatible
 * {@code CachePeer} of a cache (every method taking an object) and the relay. A class outside the allow-list is
 * rejected by the export filter before its {@code readObject} runs, counted in {@code rejected}, and the cache is
 * unchanged.
 */
@Timeout(240)
class RmiHostileInputTest {

    private ContractCluster cluster;
    private CacheManager node;
    private Registry registry;

    @BeforeEach
    void setUp() throws Exception {
        Gadget.readObjectRan = false;
        GadgetHandler.readObjectRan = false;
        cluster = new ContractCluster(RmiContractTest.FIXTURE);
        node = cluster.start("hostile", "maxFrameBytes=1m");
        String endpoint = cluster.endpoint(node);
        registry = LocateRegistry.getRegistry(RmiUrls.host(endpoint), RmiUrls.port(endpoint));
    }

    @AfterEach
    void tearDown() {
        cluster.close();
    }

    @Test
    void gadgetSentToEveryMethodOfTheCachePeer_isRejectedWithoutRunningReadObject() throws Exception {
        CachePeer peer = (CachePeer) registry.lookup("async");
        Jmx jmx = cluster.jmx(node);
        long before = jmx.managerCount("rejected");
        Gadget gadget = new Gadget("calc.exe");
        List<Runnable> attacks = List.of(
                () -> call(() -> peer.put(new Element("k", gadget))),
                () -> call(() -> peer.put(new Element(gadget, "v"))),
                () -> call(() -> peer.remove(gadget)),
                () -> call(() -> peer.getQuiet(gadget)),
                () -> call(() -> peer.getElements(new ArrayList<>(List.of(gadget)))),
                () -> call(() -> peer.send(new ArrayList<>(List.of(gadget)))),
                () -> call(() -> peer.send(new ArrayList<>(List.of(new RmiEventMessage(null,
                        RmiEventMessage.RmiEventType.PUT, "k", new Element("k", gadget)))))));
        for (Runnable attack : attacks) {
            attack.run();
        }
        assertThat(Gadget.readObjectRan).as("gadget readObject ran on the node").isFalse();
        assertThat(node.getCache("async").getSize()).isZero();
        assertThat(jmx.managerCount("rejected") - before).as("rejections counted").isGreaterThanOrEqualTo(attacks.size());
        // the peer still works for honest calls afterwards
        peer.put(new Element("k", "fine"));
        assertThat(node.getCache("async").get("k").getObjectValue()).isEqualTo("fine");
    }

    /**
     * A host the node admits (this one, by default; or one in {@code unauthenticatedPeers}) calls the stock
     * {@code CachePeer} with a nested-set bomb: the JDK decoded it before (2.7–3.5 s of CPU per call from another
     * host, ~10 s at depth 27); now the call is walked with the node's limits before the JDK reads it.
     */
    @Test
    void aNestedSetBombThroughTheStockCachePeer_isRefusedBeforeTheJdkHashesIt() throws Exception {
        CachePeer peer = (CachePeer) registry.lookup("async");
        node.getCache("async").put(new Element("kept", "value"), true);
        Jmx jmx = cluster.jmx(node);
        long before = jmx.managerCount("rejected");
        Set<Object> bomb = SetBombs.bomb(27);
        for (int i = 0; i < 3; i++) {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> peer.put(new Element("bomb", bomb))).isInstanceOf(RemoteException.class);
            long millis = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("stock CachePeer.put of a depth-27 nested-set bomb refused in %d ms%n", millis);
            assertThat(millis).as("the node read it as arithmetic, not 2^27 hashing").isLessThan(2_000);
        }
        assertThatThrownBy(() -> peer.send(new ArrayList<>(List.of(new RmiEventMessage(null,
                RmiEventMessage.RmiEventType.PUT, "bomb", new Element("bomb", bomb))))))
                .isInstanceOf(RemoteException.class);
        assertThat(jmx.managerCount("rejected") - before).as("each refused call counted").isEqualTo(4);
        assertThat(node.getCache("async").get("bomb")).isNull();
        assertThat(node.getCache("async").get("kept").getObjectValue()).isEqualTo("value");
        // the same depth of sets, not sharing members, and honest calls pass
        Set<Object> chain = new HashSet<>();
        Set<Object> s = chain;
        for (int i = 0; i < 27; i++) {
            Set<Object> t = new HashSet<>();
            t.add("n" + i);
            s.add(t);
            s = t;
        }
        peer.put(new Element("chain", chain));
        assertThat(node.getCache("async").get("chain")).isNotNull();
        peer.put(new Element("k", new byte[300_000]));
        assertThat((byte[]) node.getCache("async").get("k").getObjectValue()).hasSize(300_000);
    }

    @Test
    void aStockPeersPutOfARefusedClass_isRefusedAndCounted_andClearsNothing() throws Exception {
        CachePeer peer = (CachePeer) registry.lookup("async");
        node.getCache("async").put(new Element("old", "value"), true);
        node.getCache("async").put(new Element("other", "value"), true);
        Jmx jmx = cluster.jmx(node);
        assertThatThrownBy(() -> peer.put(new Element("old", new Gadget("x")))).isInstanceOf(RemoteException.class);
        assertThat(Gadget.readObjectRan).isFalse();
        // the JDK refuses the whole element, key included: which key changed is unknown, and the cache is not
        // cleared for it (a stock node's write of a class the allow-list refuses is said in a WARN naming the
        // allowedClasses setting that admits it)
        assertThat(node.getCache("async").getSize()).isEqualTo(2);
        assertThat(jmx.cacheCount("async", "rejected")).isEqualTo(1);
        assertThat(jmx.cacheCount("async", "invalidated")).isZero();
    }

    @Test
    void gadgetInsideARelayBatch_isRejectedByTheCodec_andOversizedBatchByTheFilter() throws Exception {
        RelayRemote relay = (RelayRemote) registry.lookup(RelayRemote.BINDING);
        Jmx jmx = cluster.jmx(node);
        long before = jmx.managerCount("rejected");
        byte[] batch = EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("k", new Gadget("x"))));
        relay.deliver(new RelayBatch("attacker", null, batch));
        assertThat(Gadget.readObjectRan).isFalse();
        assertThat(node.getCache("async").get("k")).isNull();
        assertThat(jmx.managerCount("rejected") - before).isEqualTo(1);

        // maxFrameBytes=1m: a 2 MiB batch is refused on reading its length, before its bytes
        assertThatThrownBy(() -> relay.deliver(new RelayBatch("attacker", null, new byte[2 << 20])))
                .isInstanceOf(RemoteException.class);
        assertThat(jmx.managerCount("rejected") - before).isEqualTo(2);
        // garbage bytes in the right type: a damaged batch, counted, nothing applied
        assertThatThrownBy(() -> relay.deliver(new RelayBatch("attacker", null, new byte[] {1, 2, 3, 4, 5, 6, 7})))
                .isInstanceOf(RemoteException.class).hasMessageContaining("rejected");
        assertThat(jmx.managerCount("malformedFrames")).isGreaterThanOrEqualTo(1);
        assertThat(node.getCache("async").getSize()).isZero();
    }

    @Test
    void fuzz_100kHostileBatchesPostedToTheRelay_eachCountedNoneApplied() throws Exception {
        RelayRemote relay = (RelayRemote) registry.lookup(RelayRemote.BINDING);
        Jmx jmx = cluster.jmx(node);
        long before = jmx.managerCount("malformedFrames");
        int n = 100_000;
        HostileInputs.Tally tally = HostileInputs.generate(2026, n, batch -> {
            try {
                relay.post(new RelayBatch("fuzzer", null, batch)); // posted batches are decoded on the node's apply thread
            } catch (RemoteException e) {
                throw new AssertionError("the relay refused a post: " + e, e);
            }
        });
        Await.until(() -> jmx.managerCount("malformedFrames") - before == n,
                () -> "malformedFrames " + (jmx.managerCount("malformedFrames") - before) + " of " + n);
        System.out.printf("[rmi] fuzz: %s, all counted in malformedFrames%n", tally);
        for (String cache : node.getCacheNames()) {
            assertThat(node.getCache(cache).getSize()).as(cache).isZero();
        }
        CacheManager peer = cluster.start("peer");
        peer.getCache("async").put(new Element("after", "fuzz"));
        Await.until(() -> node.getCache("async").get("after") != null,
                () -> "the node stopped replicating");
    }

    /**
     * The registry's bind arguments are read by the JDK's registry filter (this node's own binds are local
     * calls): the classic attack, a proxy implementing {@code Remote} whose invocation handler is a gadget,
     * is rejected before the handler's {@code readObject} runs.
     */
    @Test
    void gadgetBoundIntoTheRegistry_isRejectedWithoutRunningReadObject() {
        Remote proxy = (Remote) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {Remote.class}, new GadgetHandler());
        assertThatThrownBy(() -> registry.rebind("evil", proxy)).isInstanceOf(RemoteException.class);
        assertThat(GadgetHandler.readObjectRan).isFalse();
    }

    private static void call(ThrowingCall c) {
        try {
            c.run();
        } catch (RemoteException expected) {
            return;
        } catch (Exception e) {
            throw new AssertionError("expected a RemoteException, got " + e, e);
        }
        throw new AssertionError("a hostile call was accepted");
    }

    @FunctionalInterface
    interface ThrowingCall {
        void run() throws Exception;
    }

    /** A gadget in the shape the registry accepts: the invocation handler of a {@code Remote} proxy. */
    static final class GadgetHandler implements InvocationHandler, Serializable {
        private static final long serialVersionUID = 1L;
        static volatile boolean readObjectRan;

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) {
            return null;
        }

        private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
            readObjectRan = true;
            in.defaultReadObject();
        }
    }
}
