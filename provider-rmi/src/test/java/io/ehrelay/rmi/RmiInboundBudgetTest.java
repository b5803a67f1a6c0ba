package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.rmi.RemoteException;
import java.rmi.registry.LocateRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import io.ehrelay.testing.CacheKeys;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The memory an RMI node holds for batches being read is bounded for all callers together
 * ({@code inboundBufferMaxBytes}): callers that announce large batches and stop in the middle hold at most the
 * budget; the rest wait up to 10 s for room and are refused (counted in {@code rejected}); small batches and
 * honest replication go on; everything is given back when the stalled calls end.
 */
@Timeout(120)
class RmiInboundBudgetTest {

    private static final int MB = 1 << 20;
    private ContractCluster cluster;

    @AfterEach
    void tearDown() {
        if (cluster != null) {
            cluster.close();
        }
        InboundConnections.idleMillis = 60_000;
    }

    @Test
    void stalledLargeBatches_holdAtMostTheBudget_theRestAreRefused_andSmallOnesFlow() throws Exception {
        InboundConnections.idleMillis = 16_000; // the stalled callers' connections end 16 s after their last byte
        cluster = new ContractCluster(RmiContractTest.FIXTURE);
        String props = "maxFrameBytes=4m, inboundBufferMaxBytes=8m";
        CacheManager a = cluster.start("a", props);
        CacheManager b = cluster.start("b", props);
        Jmx jmx = cluster.jmx(a);
        b.getCache("async").put(new Element("warm", "up"));
        Await.until(() -> a.getCache("async").get("warm") != null, () -> "replication before the attack");
        RelayRemote relay = relay(a);
        long rejectedBefore = jmx.managerCount("rejected");

        // six callers announce 4 MB each and send 1 MB: the budget (8 MB) admits two at a time; the first two
        // start alone, so that the other four wait from a known moment (refused 10 s later, well before the
        // holders' connections end)
        int callers = 6;
        AtomicInteger ended = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
            if (i == 2) {
                Await.until(Duration.ofSeconds(10),
                        () -> jmx.managerGauge("inboundBufferBytes").longValue() == 8L * MB,
                        () -> "two stalled batches hold the budget: " + jmx.managerGauge("inboundBufferBytes"));
            }
            String name = "staller-" + i;
            Thread t = new Thread(() -> {
                try {
                    // (the caller stops for 17 s: the node ends its connection first, after 16 s of silence)
                    relay.post(RelayBatch.stalling(name, null, new byte[MB], 4 * MB, 17_000));
                } catch (RemoteException e) {
                    // expected: the stalled call fails
                } finally {
                    ended.incrementAndGet();
                }
            }, name);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        AtomicBoolean sampling = new AtomicBoolean(true);
        AtomicLong peak = new AtomicLong();
        Thread sampler = new Thread(() -> {
            while (sampling.get()) {
                peak.accumulateAndGet(jmx.managerGauge("inboundBufferBytes").longValue(), Math::max);
                sleep(10);
            }
        }, "budget-sampler");
        sampler.start();
        Await.until(Duration.ofSeconds(10), () -> jmx.managerGauge("inboundBufferBytes").longValue() == 8L * MB,
                () -> "two stalled batches hold the budget: " + jmx.managerGauge("inboundBufferBytes"));

        // while the budget is spent, small batches (up to 64 KiB) flow: honest replication goes on
        for (int i = 0; i < 50; i++) {
            b.getCache("async").put(new Element("during-" + i, new byte[1000]));
        }
        Await.until(Duration.ofSeconds(5), () -> a.getCache("async").get("during-49") != null,
                () -> "small batches while the budget is spent");

        // the four that found no room are refused after 10 s, counted; the two holders end with their connections
        Await.until(Duration.ofSeconds(20), () -> jmx.managerCount("rejected") - rejectedBefore == callers - 2,
                () -> "refused for lack of room: " + (jmx.managerCount("rejected") - rejectedBefore));
        Await.until(Duration.ofSeconds(10), () -> jmx.managerGauge("inboundBufferBytes").longValue() == 0,
                () -> "the budget is given back: " + jmx.managerGauge("inboundBufferBytes"));
        Await.until(Duration.ofSeconds(10), () -> ended.get() == callers, () -> ended.get() + " calls ended");
        sampling.set(false);
        sampler.join();
        long rejected = jmx.managerCount("rejected") - rejectedBefore;
        System.out.printf("[rmi] %d callers stalled in 4 MB batches: peak inboundBufferBytes %d KiB (bound %d KiB), "
                + "refused for lack of room: rejected +%d%n", callers, peak.get() >> 10, 8 * 1024, rejected);
        assertThat(rejected).as("refusals counted in rejected").isEqualTo(callers - 2);
        assertThat(CacheKeys.of(a.getCache("async"))).as("nothing of the stalled batches was applied")
                .noneMatch(k -> String.valueOf(k).startsWith("staller"));

        // afterwards a large honest batch (2 MB) finds room
        b.getCache("async").put(new Element("large", new byte[2 * MB]));
        Await.until(() -> a.getCache("async").get("large") != null, () -> "a large batch after the attack");
    }

    @Test
    void aBatchLargerThanMaxFrameBytes_isRefusedBeforeItsBytesAreRead() throws Exception {
        cluster = new ContractCluster(RmiContractTest.FIXTURE);
        CacheManager a = cluster.start("a", "maxFrameBytes=1m");
        Jmx jmx = cluster.jmx(a);
        RelayRemote relay = relay(a);
        long before = jmx.managerCount("rejected");
        // it announces 1 GB and carries 1 KB: refused on the length alone, while the caller still waits
        AtomicBoolean returned = new AtomicBoolean();
        Thread caller = new Thread(() -> {
            try {
                relay.post(RelayBatch.stalling("big", null, new byte[1024], 1 << 30, 5_000));
            } catch (RemoteException e) {
                // the stalled call fails
            }
            returned.set(true);
        }, "big-caller");
        caller.start();
        Await.until(Duration.ofSeconds(3), () -> jmx.managerCount("rejected") - before == 1,
                () -> "refused: rejected +" + (jmx.managerCount("rejected") - before));
        assertThat(returned.get()).as("refused before the caller gave up").isFalse();
        assertThat(jmx.managerGauge("inboundBufferBytes").longValue()).isZero();
        caller.join();
    }

    @Test
    void aBatchSentInThePlaceOfAnotherArgument_givesItsShareBack() throws Exception {
        cluster = new ContractCluster(RmiContractTest.FIXTURE);
        CacheManager a = cluster.start("a", "maxFrameBytes=4m, inboundBufferMaxBytes=8m");
        Jmx jmx = cluster.jmx(a);
        RelayRemote relay = relay(a);
        // a proxy that passes a 3 MB batch where hello's name goes: the JDK reads it, the call then fails before
        // the relay runs, so nothing claims the share
        InvocationHandler h = Proxy.getInvocationHandler(relay);
        Method hello = RelayRemote.class.getMethod("hello", byte[].class, byte[].class);
        for (int i = 0; i < 2; i++) {
            try {
                h.invoke(relay, hello, new Object[] {new RelayBatch("misplaced", null, new byte[3 * MB]), null});
            } catch (Throwable expected) {
                // the call fails: wrong argument type
            }
        }
        assertThat(jmx.managerGauge("inboundBufferBytes").longValue()).as("shares taken by the misplaced batches")
                .isEqualTo(6L * MB);
        // the next batch that needs room finds it once the unclaimed shares are 5 s old
        CacheManager b = cluster.start("b", "maxFrameBytes=4m, inboundBufferMaxBytes=8m");
        b.getCache("async").put(new Element("large", new byte[3 * MB]));
        Await.until(Duration.ofSeconds(15), () -> a.getCache("async").get("large") != null,
                () -> "a large batch after the misplaced ones");
        Await.until(Duration.ofSeconds(5), () -> jmx.managerGauge("inboundBufferBytes").longValue() == 0,
                () -> "every share given back: " + jmx.managerGauge("inboundBufferBytes"));
    }

    /** The node's relay, from its registry. */
    private RelayRemote relay(CacheManager node) throws Exception {
        return (RelayRemote) LocateRegistry.getRegistry("127.0.0.1", RmiUrls.port(cluster.endpoint(node)))
                .lookup(RelayRemote.BINDING);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
