package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.ehrelay.contract.Await;

/**
 * {@code peerDiscovery=dns} for real: containers on the project's own (internal) Docker network share one network
 * alias, so Docker's embedded DNS answers that name with every running member's address, as a Kubernetes headless
 * Service does. Under continuous writes, two nodes found by the name alone scale out to four (each newcomer
 * bootstraps from a member the name gave and is listed by every member), one is replaced by a new container (a
 * rolling restart: the old address leaves every list, the new one joins), the group scales back to two; then both
 * remaining nodes hold every write. TCP, RMI and Hessian with {@code peerDiscovery=dns}; JGroups with its shipped
 * DNS stack ({@code DNS_PING}), where a member leaves the lists by leaving the view.
 */
class DnsContainersIT {

    private static final String DNS = "dns=ehrelay-peers";
    private static final String CACHE = "bootstrapped";
    private static final int SIZE = 256;
    private static final int CHUNK = 50;

    private static int peers(NodeContainers.Node n) {
        try {
            return ((Number) n.managerAttribute("peersKnown", "Value")).intValue();
        } catch (Exception e) {
            return -1;
        }
    }

    /** Waits until every node lists {@code expected} peers; returns how long that took from {@code since}. */
    private static long awaitListed(List<NodeContainers.Node> nodes, int expected, long since, String what) {
        Await.until(Duration.ofSeconds(60), () -> nodes.stream().allMatch(n -> peers(n) == expected),
                () -> what + ": peers known " + nodes.stream().map(n -> n.alias + "=" + peers(n)).toList());
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rmi", "hessian", "jgroups"})
    void foundByOneDnsName_scaleOutReplaceAndScaleInUnderWrites_endEqual(String transport) throws Exception {
        try (NodeContainers containers = new NodeContainers(transport)) {
            NodeContainers.Node a = containers.start("dns-a", "-Xmx256m", DNS);
            NodeContainers.Node b = containers.start("dns-b", "-Xmx256m", DNS);
            awaitListed(List.of(a, b), 1, System.nanoTime(), "by the name alone");

            // a writes all along, CHUNK keys at a time
            AtomicInteger written = new AtomicInteger();
            AtomicReference<Throwable> writeFailure = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        a.control.write(CACHE, written.get(), CHUNK, SIZE);
                        written.addAndGet(CHUNK);
                        Thread.sleep(20);
                    }
                } catch (InterruptedException e) {
                    // stopped
                } catch (Throwable t) {
                    writeFailure.set(t);
                }
            }, "dns-writer");
            writer.start();
            List<String> timings = new ArrayList<>();
            try {
                // scale out to four: each newcomer bootstraps (synchronously, at its start) and is found by all
                long t0 = System.nanoTime();
                NodeContainers.Node c = containers.start("dns-c", "-Xmx256m", DNS);
                assertThat(c.control.size(CACHE)).as("c bootstrapped while a wrote").isPositive();
                timings.add("c listed by all " + awaitListed(List.of(a, b, c), 2, t0, "c joining") + " ms");
                long t1 = System.nanoTime();
                NodeContainers.Node d = containers.start("dns-d", "-Xmx256m", DNS);
                timings.add("d listed by all " + awaitListed(List.of(a, b, c, d), 3, t1, "d joining") + " ms");

                // a rolling restart: b stops, e (a new container, a new address, the same name) takes its place
                long t2 = System.nanoTime();
                containers.stop(b);
                timings.add("b dropped by all " + awaitListed(List.of(a, c, d), 2, t2, "b leaving") + " ms");
                long t3 = System.nanoTime();
                NodeContainers.Node e = containers.start("dns-e", "-Xmx256m", DNS);
                timings.add("e listed by all " + awaitListed(List.of(a, c, d, e), 3, t3, "e joining") + " ms");

                // scale in to two, one node after the other (as a Deployment scales down)
                long t4 = System.nanoTime();
                containers.stop(c);
                timings.add("c dropped by all " + awaitListed(List.of(a, d, e), 2, t4, "c leaving") + " ms");
                long t5 = System.nanoTime();
                containers.stop(d);
                timings.add("d dropped by all " + awaitListed(List.of(a, e), 1, t5, "d leaving") + " ms");
                Thread.sleep(500); // a few more writes with two members
            } finally {
                writer.interrupt();
                writer.join(30_000);
            }
            assertThat(writeFailure.get()).as("the writer's puts").isNull();
            int keys = written.get();
            NodeContainers.Node e2 = containers.nodes().stream().filter(n -> n.alias.equals("dns-e")).findFirst()
                    .orElseThrow();
            Await.until(Duration.ofSeconds(60), () -> e2.control.size(CACHE) == keys,
                    () -> "e holds " + e2.control.size(CACHE) + " of " + keys);
            for (NodeContainers.Node n : List.of(a, e2)) {
                assertThat(n.control.size(CACHE)).as(n.alias).isEqualTo(keys);
                assertThat(n.control.verify(CACHE, 0, keys, SIZE)).as(n.alias + ": missing, different")
                        .containsExactly(0, 0);
            }
            System.out.printf("[dns %s] under writes (%d keys of %d B from a): %s; a and e equal, %d entries "
                    + "compared on each%n", transport, keys, SIZE, String.join(", ", timings), keys);
        }
    }
}
