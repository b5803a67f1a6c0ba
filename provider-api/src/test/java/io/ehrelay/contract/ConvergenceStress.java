package io.ehrelay.contract;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.Op;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The convergence profile ({@code ./mvnw -Pconvergence verify}): each scenario many times per transport
 * ({@code -Dconvergence.runs}, 50 by default), with default properties unless the scenario is about a fault.
 * Every run asserts that all nodes end with the same entries, and records how long after the writers stopped
 * they agreed; each scenario prints one line (runs, runs that did not agree, median and worst time to agreement,
 * the conflicts counted) and appends it to {@code target/convergence.txt}. The negative control runs the same
 * writers with ordering switched off ({@code -Dehrelay.ordering=arrival}) and asserts that nodes then diverge.
 */
@Timeout(value = 3, unit = TimeUnit.HOURS)
public abstract class ConvergenceStress {

    private static final int RUNS = Integer.getInteger("convergence.runs", 50);
    /** Fault scenarios' anti-entropy interval: repairs are bounded by two of them. */
    private static final int AE_MILLIS = 2000;

    private ContractCluster cluster;

    protected abstract TransportFixture fixture();

    @BeforeEach
    void start() {
        cluster = new ContractCluster(fixture());
    }

    @AfterEach
    void stop() {
        cluster.close();
        System.clearProperty("ehrelay.ordering");
    }

    /** One scenario's outcome over its runs. */
    private final class Tally {
        final String scenario;
        final List<Long> agreementMillis = new ArrayList<>();
        int diverged;
        long maxDiffering;
        long conflicts;
        long repaired;
        long writes;

        Tally(String scenario) {
            this.scenario = scenario;
        }

        String line() {
            List<Long> sorted = new ArrayList<>(agreementMillis);
            Collections.sort(sorted);
            long median = sorted.isEmpty() ? -1 : sorted.get(sorted.size() / 2);
            long worst = sorted.isEmpty() ? -1 : sorted.get(sorted.size() - 1);
            return String.format(Locale.ROOT, "%-8s %-28s runs %3d  not agreeing %3d (most keys differing %d)  "
                    + "agreement median %5d ms, worst %5d ms  writes %8d  conflicts+stale %7d  repaired %6d",
                    fixture().transportName(), scenario, agreementMillis.size() + diverged, diverged, maxDiffering,
                    median, worst, writes, conflicts, repaired);
        }

        void report() throws IOException {
            String line = line();
            System.out.println("CONVERGENCE " + line);
            Path out = Path.of("target", "convergence.txt");
            Files.createDirectories(out.getParent());
            Files.write(out, (line + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        }
    }

    private List<Ehcache> caches(String name, List<CacheManager> cms) {
        List<Ehcache> out = new ArrayList<>();
        for (CacheManager cm : cms) {
            out.add(cm.getEhcache(name));
        }
        return out;
    }

    /** Waits for agreement; counts it in the tally (a run that does not agree within the bound is counted). */
    private void agree(Tally t, List<CacheManager> cms, String cache, Duration bound) {
        List<Ehcache> caches = caches(cache, cms);
        try {
            t.agreementMillis.add(ConvergenceWorkload.awaitEqual(caches, bound));
        } catch (AssertionError e) {
            t.diverged++;
            t.maxDiffering = Math.max(t.maxDiffering, ConvergenceWorkload.differing(caches).size());
            System.out.println("CONVERGENCE " + t.scenario + ": " + e.getMessage());
        }
        for (CacheManager cm : cms) {
            Jmx j = cluster.jmx(cm);
            t.conflicts += j.cacheCount(cache, "conflictsLocalWon") + j.cacheCount(cache, "staleDiscarded");
            t.repaired += j.cacheCount(cache, "keysRepaired");
        }
    }

    private List<CacheManager> nodes(int n, String props) {
        List<CacheManager> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(cluster.start("c" + i, props));
        }
        return out;
    }

    private void close(List<CacheManager> cms) {
        for (CacheManager cm : cms) {
            cluster.stop(cm);
        }
    }

    private void plain(String scenario, int nodes, double[] removes, boolean removeAll, String props)
            throws Exception {
        Tally t = new Tally(scenario);
        for (int run = 0; run < RUNS; run++) {
            List<CacheManager> cms = nodes(nodes, props);
            ConvergenceWorkload.Result r = ConvergenceWorkload.run(caches("async", cms), 200, 1000, 2, 4000,
                    removes, removeAll, run);
            t.writes += r.puts + r.removes;
            agree(t, cms, "async", Duration.ofSeconds(2));
            close(cms);
        }
        t.report();
        assertThat(t.diverged).as(t.line()).isZero();
    }

    @Test
    void twoNodesBothPut() throws Exception {
        plain("2 nodes, both put", 2, new double[] {0, 0}, false, "");
    }

    @Test
    void aPutsBRemoves() throws Exception {
        plain("A puts, B removes", 2, new double[] {0, 1}, false, "");
    }

    @Test
    void threeNodesAllWrite_withARemoveAll() throws Exception {
        plain("3 nodes, all write, removeAll", 3, new double[] {0.2, 0.2, 0.2}, true, "");
    }

    @Test
    void negativeControl_withoutOrdering_nodesDiverge() throws Exception {
        System.setProperty("ehrelay.ordering", "arrival");
        Tally t = new Tally("control: arrival order");
        for (int run = 0; run < Math.min(RUNS, 10); run++) {
            List<CacheManager> cms = nodes(2, "antiEntropyIntervalMillis=0");
            ConvergenceWorkload.Result r = ConvergenceWorkload.run(caches("async", cms), 200, 1000, 2, 4000,
                    new double[] {0, 0}, false, run);
            t.writes += r.puts + r.removes;
            agree(t, cms, "async", Duration.ofSeconds(2));
            close(cms);
        }
        t.report();
        assertThat(t.diverged).as("without ordering, crossed writes stay crossed: " + t.line()).isPositive();
    }

    @Test
    void droppedBatches_areRepaired() throws Exception {
        Tally t = new Tally("fault: queue drops");
        for (int run = 0; run < RUNS; run++) {
            List<CacheManager> cms = new ArrayList<>();
            cms.add(cluster.start("drops", "queueMaxEvents=20, overflowPolicy=drop, antiEntropyIntervalMillis="
                    + AE_MILLIS));
            cms.add(cluster.start("keeps", "antiEntropyIntervalMillis=" + AE_MILLIS));
            ConvergenceWorkload.Result r = ConvergenceWorkload.run(caches("async", cms), 200, 1000, 2, 4000,
                    new double[] {0.2, 0.2}, false, run);
            t.writes += r.puts + r.removes;
            agree(t, cms, "async", Duration.ofMillis(2 * AE_MILLIS + 2000));
            close(cms);
        }
        t.report();
        assertThat(t.diverged).as(t.line()).isZero();
    }

    @Test
    void writesOneNodeNeverHeard_areRepairedByAntiEntropy() throws Exception {
        Tally t = new Tally("fault: silent loss");
        for (int run = 0; run < RUNS; run++) {
            List<CacheManager> cms = nodes(2, "antiEntropyIntervalMillis=" + AE_MILLIS);
            Thread lost = new Thread(() -> {
                // a peer that wrote to one node only, then vanished: 100 writes no gap reveals
                long base = System.currentTimeMillis() << 16;
                for (int i = 0; i < 100; i++) {
                    try {
                        int[] hashes = new int[2];
                        // keys the writers do not touch: only anti-entropy can bring them to the other node
                        byte[] ev = EventCodec.encodePut("async", new Element("lost-" + i, "v" + i), null, hashes);
                        EventCodec.stamp(ev, base + i, 0x5eed, hashes[1]);
                        cluster.node(cms.get(i % 2)).inbound().onEvents("vanished:1",
                                ByteBuffer.wrap(EventCodec.singletonBatch(ev)));
                        Thread.sleep(5);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }
            });
            lost.start();
            ConvergenceWorkload.Result r = ConvergenceWorkload.run(caches("async", cms), 200, 1000, 2, 4000,
                    new double[] {0.2, 0.2}, false, run);
            lost.join();
            t.writes += r.puts + r.removes;
            agree(t, cms, "async", Duration.ofMillis(2 * AE_MILLIS + 2000));
            close(cms);
        }
        t.report();
        assertThat(t.diverged).as(t.line()).isZero();
    }

    /**
     * Delayed batches: a third writer's puts and removes of the very keys the two nodes write reach one node at
     * once and the other 300–800 ms later (a batch held up on a slow link), out of order with everything else.
     * Nothing is lost, so the nodes must agree without anti-entropy (default properties), within the
     * no-fault bound.
     */
    @Test
    void delayedBatches_areOrderedWhenTheyArrive() throws Exception {
        Tally t = new Tally("fault: delayed batches");
        for (int run = 0; run < RUNS; run++) {
            List<CacheManager> cms = nodes(2, "");
            ScheduledExecutorService late =
                    Executors.newSingleThreadScheduledExecutor();
            Random random = new Random(run);
            AtomicReference<Throwable> failed =
                    new AtomicReference<>();
            Thread third = new Thread(() -> {
                try {
                    long origin = 0x1a7e;
                    for (int i = 0; i < 150; i++) {
                        String key = "k" + random.nextInt(200);
                        int[] hashes = new int[2];
                        byte[] ev = random.nextInt(4) == 0
                                ? EventCodec.encodeKey(Op.REMOVE, "async", key, null, hashes)
                                : EventCodec.encodePut("async", new Element(key, "late-" + i), null, hashes);
                        EventCodec.stamp(ev, System.currentTimeMillis() << 16 | i, origin, hashes[1]);
                        byte[] batch = EventCodec.singletonBatch(ev);
                        CacheManager first = cms.get(i % 2);
                        CacheManager second = cms.get(1 - i % 2);
                        cluster.node(first).inbound().onEvents("late:1", ByteBuffer.wrap(batch));
                        late.schedule(() -> {
                            try {
                                cluster.node(second).inbound().onEvents("late:1", ByteBuffer.wrap(batch));
                            } catch (Exception e) {
                                failed.set(e);
                            }
                        }, 300 + random.nextInt(500), TimeUnit.MILLISECONDS);
                        Thread.sleep(6);
                    }
                } catch (Exception e) {
                    failed.set(e);
                }
            });
            third.start();
            ConvergenceWorkload.Result r = ConvergenceWorkload.run(caches("async", cms), 200, 1000, 2, 4000,
                    new double[] {0.2, 0.2}, false, run);
            third.join();
            late.shutdown();
            assertThat(late.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
            assertThat(failed.get()).as("delivering the delayed batches").isNull();
            t.writes += r.puts + r.removes + 150;
            agree(t, cms, "async", Duration.ofSeconds(2));
            close(cms);
        }
        t.report();
        assertThat(t.diverged).as(t.line()).isZero();
        assertThat(t.conflicts).as("late writes older than what the keys held are discarded and counted").isPositive();
    }

    @Test
    void aNodeThatCrashes_andComesBackBootstrapping_endsEqual() throws Exception {
        Tally t = new Tally("fault: crash, back empty");
        for (int run = 0; run < RUNS; run++) {
            CacheManager a = cluster.start("stays", "antiEntropyIntervalMillis=" + AE_MILLIS);
            CacheManager b = cluster.start("crashes", "antiEntropyIntervalMillis=" + AE_MILLIS);
            for (String cache : List.of("bootstrapped", "async")) {
                ConvergenceWorkload.run(caches(cache, List.of(a, b)), 200, 300, 1, 2000,
                        new double[] {0.2, 0.2}, false, run);
            }
            cluster.node(b).transport().stop(); // as a crash: no word to anyone
            cluster.stop(b);
            for (String cache : List.of("bootstrapped", "async")) {
                ConvergenceWorkload.run(caches(cache, List.of(a)), 200, 200, 1, 2000, new double[] {0.2}, false,
                        run + 1000);
            }
            // back with an empty heap: "bootstrapped" loads from a, "async" (no bootstrap) is filled by
            // anti-entropy
            CacheManager b2 = cluster.start("returns", "antiEntropyIntervalMillis=" + AE_MILLIS);
            for (String cache : List.of("bootstrapped", "async")) {
                ConvergenceWorkload.Result r = ConvergenceWorkload.run(caches(cache, List.of(a, b2)), 200,
                        300, 1, 2000, new double[] {0.2, 0.2}, false, run + 2000);
                t.writes += r.puts + r.removes;
            }
            agree(t, List.of(a, b2), "bootstrapped", Duration.ofMillis(2 * AE_MILLIS + 2000));
            agree(t, List.of(a, b2), "async", Duration.ofMillis(2 * AE_MILLIS + 2000));
            close(List.of(a, b2));
        }
        t.report();
        assertThat(t.diverged).as(t.line()).isZero();
    }
}
