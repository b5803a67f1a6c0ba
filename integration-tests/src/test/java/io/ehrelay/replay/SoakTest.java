package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * The soak: two node processes, one writing a steady mixed load (puts, updates, removes on 2,000 keys) for
 * {@code ehrelay.soak.minutes} (default 10), the other replicating; every 10 s both are sampled (heap after a
 * GC, live threads, the writer's queue high water). Nothing may grow without bound: the last third's heap and
 * threads stay within the first third's (plus a margin), the queue within its bound, and both end equal. Runs
 * only in the {@code soak} Maven profile ({@code ./mvnw -B -ntp verify -Psoak}), not in CI. The timeout leaves
 * room for soaks of up to about two and a half hours.
 */
@EnabledIfSystemProperty(named = "ehrelay.soak", matches = "true")
@Timeout(value = 3, unit = TimeUnit.HOURS)
class SoakTest {

    @TempDir
    Path dir;

    @Test
    void steadyMixedLoad_nothingGrowsWithoutBound() throws Exception {
        String transport = System.getProperty("ehrelay.soak.transport", "tcp");
        int minutes = Integer.getInteger("ehrelay.soak.minutes", 10);
        Path log = dir.resolve("nodes.log");
        Files.createFile(log);
        int[] ports = {ReplayNode.freePort(), ReplayNode.freePort()};
        List<NodeProcess> nodes = new ArrayList<>();
        try {
            for (int i = 1; i >= 0; i--) {
                NodeProcess n = NodeProcess.start("soak" + i, "256m", FaultNode.class, new ArrayList<>(List.of(
                        "transport=" + transport, "index=" + i, "ports=" + ports[0] + "," + ports[1],
                        "settings=queueMaxEvents=2000;overflowPolicy=drop;sendTimeoutMillis=1000")), log);
                nodes.add(n);
                n.expect("READY", deadline(90), l -> { });
            }
            NodeProcess reader = nodes.get(0);
            NodeProcess writer = nodes.get(1);
            writer.send("AWAIT_PEERS 1");
            writer.expect("PEERS", deadline(90), l -> { });
            int samples = minutes * 6;
            long[][] heap = new long[2][samples];
            long[][] threads = new long[2][samples];
            long queueHigh = 0;
            long capacity = 0;
            for (int s = 0; s < samples; s++) {
                writer.send("WRITE 10000");
                String[] wrote = writer.expect("WROTE", deadline(90), l -> { }).split(" ");
                for (int k = 0; k < 2; k++) {
                    NodeProcess n = k == 0 ? writer : reader;
                    n.send("HEAP");
                    String[] h = n.expect("HEAP", deadline(90), l -> { }).split(" ");
                    heap[k][s] = Long.parseLong(h[1]);
                    threads[k][s] = Long.parseLong(h[2]);
                }
                writer.send("STATS");
                String[] st = writer.expect("STATS", deadline(90), l -> { }).split(" ");
                queueHigh = Long.parseLong(st[4]);
                capacity = Long.parseLong(st[5]);
                System.out.printf("[%s soak] %3d s: %s ops, slowest put %s µs; writer heap %d MB, %d threads; reader "
                        + "heap %d MB, %d threads; sent %s failed %s dropped %s%n", transport, (s + 1) * 10, wrote[1],
                        wrote[2], heap[0][s], threads[0][s], heap[1][s], threads[1][s], st[1], st[2], st[3]);
            }
            int third = samples / 3;
            for (int k = 0; k < 2; k++) {
                long firstHeap = max(heap[k], 0, third);
                long lastHeap = max(heap[k], samples - third, samples);
                long firstThreads = max(threads[k], 0, third);
                long lastThreads = max(threads[k], samples - third, samples);
                String who = k == 0 ? "writer" : "reader";
                assertThat(lastHeap).as(who + " heap after GC, last third vs first (MB)")
                        .isLessThanOrEqualTo(firstHeap + firstHeap / 2 + 32);
                assertThat(lastThreads).as(who + " threads, last third vs first").isLessThanOrEqualTo(firstThreads + 2);
            }
            assertThat(queueHigh).as("queue high water").isLessThanOrEqualTo(capacity);
            long end = deadline(90);
            String a = null;
            String b = null;
            while (System.nanoTime() < end) {
                writer.send("DIGEST");
                a = writer.expect("DIGEST", deadline(90), l -> { });
                reader.send("DIGEST");
                b = reader.expect("DIGEST", deadline(90), l -> { });
                if (a.equals(b)) {
                    break;
                }
                Thread.sleep(500);
            }
            assertThat(b).as("the reader ends equal to the writer").isEqualTo(a);
        } finally {
            for (NodeProcess n : nodes) {
                n.close();
            }
        }
    }

    private static long max(long[] v, int from, int to) {
        long m = 0;
        for (int i = from; i < to; i++) {
            m = Math.max(m, v[i]);
        }
        return m;
    }

    private static long deadline(int seconds) {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    }
}
