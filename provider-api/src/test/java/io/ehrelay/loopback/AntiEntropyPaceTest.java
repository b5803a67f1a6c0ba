package io.ehrelay.loopback;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.ConvergenceWorkload;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;

/**
 * How anti-entropy paces its rounds, an engine matter whatever the transport (so on the loopback transport alone:
 * the contract suite covers the repairs themselves on every transport).
 */
class AntiEntropyPaceTest {

    /** Rounds every second, of at most 64 KB each. */
    private static final String PROPS = "antiEntropyIntervalMillis=1000, antiEntropyMaxBytesPerRound=64k, "
            + "tombstoneRetentionMillis=60000";

    /**
     * More divergence than one round may fetch (a node that joined while another wrote, a long partition): a round
     * that repaired keys is followed within a fifth of the interval, not an interval later. 3,000 writes only b
     * holds, about 780 KB, against rounds of 64 KB from a random leaf on: at one round per 1 s interval that takes
     * 14 s or more; here they arrive within 10 s (about 5 s on this project's machine).
     */
    @Test
    void aRoundThatRepaired_isFollowedSoon_soThatMoreThanOneRoundHoldsIsRepairedInSeconds() throws Exception {
        try (ContractCluster cluster = new ContractCluster(LoopbackContractTest.FIXTURE)) {
            CacheManager a = cluster.start("a", PROPS);
            CacheManager b = cluster.start("b", PROPS);
            a.getEhcache("async").put(new Element("marker", "m"));
            Await.until(() -> b.getEhcache("async").get("marker") != null, () -> "not connected");
            // settled writes (older than an interval) of a peer that told b only, and vanished
            long old = (System.currentTimeMillis() - 5000) << 16;
            String value = "v".repeat(200);
            for (int i = 0; i < 3000; i++) {
                cluster.injectFromVanishedPeer(b, "async", "lost-" + i, value + i, old + i);
            }
            long t0 = System.nanoTime();
            Await.until(Duration.ofSeconds(10), () -> a.getEhcache("async").getSize() >= 3001,
                    () -> "a holds " + a.getEhcache("async").getSize() + " of 3001 after "
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
            ConvergenceWorkload.awaitEqual(List.of(a.getEhcache("async"), b.getEhcache("async")),
                    Duration.ofSeconds(10));
            assertThat(a.getEhcache("async").get("lost-2999").getObjectValue()).isEqualTo(value + 2999);
        }
    }

    /**
     * Every leaf differs and the asking node holds far more keys in them than one round lists (20,000 keys
     * against 1,024 per round at 64 KB): each round takes a run of the differing leaves from a random one on, and
     * the rounds together reach every leaf. b holds newer settled writes of 2,000 keys spread over all leaves.
     */
    @Test
    void roundsThatListABoundedShareOfTheDifferingLeaves_togetherReachEveryLeaf() throws Exception {
        try (ContractCluster cluster = new ContractCluster(LoopbackContractTest.FIXTURE)) {
            CacheManager a = cluster.start("a", PROPS);
            CacheManager b = cluster.start("b", PROPS);
            for (int i = 0; i < 20_000; i++) {
                a.getEhcache("async").put(new Element("k" + i, "a" + i));
            }
            Await.until(Duration.ofSeconds(30), () -> b.getEhcache("async").getSize() == 20_000,
                    () -> "b holds " + b.getEhcache("async").getSize());
            Thread.sleep(2500); // b's writes below are newer than a's, and settled (older than an interval)
            long stamp = (System.currentTimeMillis() - 1200) << 16;
            for (int i = 0; i < 20_000; i += 10) {
                cluster.injectFromVanishedPeer(b, "async", "k" + i, "b" + i, stamp + i);
            }
            Await.until(Duration.ofSeconds(30), () -> {
                for (int i = 0; i < 20_000; i += 10) {
                    Element e = a.getEhcache("async").get("k" + i);
                    if (e == null || !e.getObjectValue().equals("b" + i)) {
                        return false;
                    }
                }
                return true;
            }, () -> "a lacks some of b's 2,000 newer writes");
            ConvergenceWorkload.awaitEqual(List.of(a.getEhcache("async"), b.getEhcache("async")),
                    Duration.ofSeconds(10));
        }
    }
}
