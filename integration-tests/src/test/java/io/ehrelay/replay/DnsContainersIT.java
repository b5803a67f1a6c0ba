package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.ehrelay.contract.Await;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code peerDiscovery=dns} for real: containers on the project's own (internal) Docker network share one network
 * alias, so Docker's embedded DNS answers that name with every running member's address, as a Kubernetes headless
 * Service does. Under continuous writes, two nodes found by the name alone scale out to four (each newcomer
 * bootstraps from a member the name gave and is listed by every member), one is replaced by a new container (a
 * rolling restart: the old address leaves every list, the new one joins), the group scales back to two; then both
 * remaining nodes hold every write. TCP runs the guide's own {@code docs/containers/ehcache.xml} as it is (its
 * cluster secret mounted as a file, its name and DNS name given as system properties, as the guide's Compose and
 * Kubernetes files do); RMI and Hessian run {@code peerDiscovery=dns} with the same name; JGroups its shipped DNS
 * stack ({@code DNS_PING}), where a member leaves the lists by leaving the view.
 */
class DnsContainersIT {

    private static final String NAME = "ehrelay-peers";
    private static final String DNS = "dns=" + NAME;
    private static final Path GUIDE = Path.of(System.getProperty("basedir", ".")).resolve("../docs/containers")
            .normalize();
    private static final int SIZE = 256;
    private static final int CHUNK = 50;
    /** The nodes' log lines carry the time, for a failure's timeline. */
    private static final String LOG_TIMES = " -Dorg.slf4j.simpleLogger.showDateTime=true"
            + " -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS";

    /** Waits until every node lists {@code expected} peers; returns how long that took from {@code since}. */
    private static long awaitListed(List<NodeContainers.Node> nodes, int expected, long since, String what) {
        Await.until(Duration.ofSeconds(60), () -> nodes.stream().allMatch(n -> n.peersKnown() == expected),
                () -> what + ": peers known " + nodes.stream().map(n -> n.alias + "=" + n.peersKnown()).toList());
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    /** The cache the scenario writes: the guide's {@code users} for TCP, else the node program's own. */
    private static String cache(String transport) {
        return "tcp".equals(transport) ? "users" : "bootstrapped";
    }

    /** A member: for TCP the guide's ehcache.xml and a secret file, mounted where the guide mounts them. */
    private static NodeContainers.Node start(NodeContainers containers, String transport, String alias, Path secret)
            throws Exception {
        if (!"tcp".equals(transport)) {
            return containers.start(alias, "-Xmx256m" + LOG_TIMES, DNS);
        }
        return containers.start(alias, "-Xmx256m" + LOG_TIMES + " -Dehrelay.nodeName=" + alias + " -Dehrelay.dnsName=" + NAME,
                Map.of(GUIDE.resolve("ehcache.xml"), "/etc/ehrelay/ehcache.xml", secret, "/run/secrets/ehrelay-secret"),
                DNS, "config=/etc/ehrelay/ehcache.xml");
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rmi", "hessian", "jgroups"})
    void foundByOneDnsName_scaleOutReplaceAndScaleInUnderWrites_endEqual(String transport) throws Exception {
        String cache = cache(transport);
        Path secret = Files.createTempFile("ehrelay-secret", "");
        Files.writeString(secret, UUID.randomUUID() + "-" + UUID.randomUUID() + "\n");
        secret.toFile().deleteOnExit();
        try (NodeContainers containers = new NodeContainers(transport)) {
            NodeContainers.Node a = start(containers, transport, "dns-a", secret);
            NodeContainers.Node b = start(containers, transport, "dns-b", secret);
            awaitListed(List.of(a, b), 1, System.nanoTime(), "by the name alone");

            // a writes all along, CHUNK keys at a time
            AtomicInteger written = new AtomicInteger();
            AtomicReference<Throwable> writeFailure = new AtomicReference<>();
            Thread writer = new Thread(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        a.control.write(cache, written.get(), CHUNK, SIZE);
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
                // scale out to four, one newcomer after the other (two started at once may bootstrap part of the
                // data from each other, and then wait for anti-entropy: see containers.md): each bootstraps
                // (synchronously, at its start) while a writes, and is found by all
                long t0 = System.nanoTime();
                long startedMicros = System.currentTimeMillis() * 1000;
                NodeContainers.Node c = start(containers, transport, "dns-c", secret);
                assertThat(c.control.size(cache)).as("c bootstrapped while a wrote").isPositive();
                timings.add("c listed by all " + awaitListed(List.of(a, b, c), 2, t0, "c joining") + " ms");
                Await.until(() -> c.control.arrivals(cache)[0] > 0, () -> "c received no live event");
                timings.add("c's first live event " + (c.control.arrivals(cache)[1] - startedMicros) / 1000
                        + " ms after its container was started");
                long t1 = System.nanoTime();
                NodeContainers.Node d = start(containers, transport, "dns-d", secret);
                assertThat(d.control.size(cache)).as("d bootstrapped while a wrote").isPositive();
                timings.add("d listed by all " + awaitListed(List.of(a, b, c, d), 3, t1, "d joining") + " ms");

                // a rolling restart: b stops, e (a new container, a new address, the same name) takes its place
                long t2 = System.nanoTime();
                containers.stop(b);
                NodeContainers.Node e = start(containers, transport, "dns-e", secret);
                timings.add("b replaced by e in all lists " + awaitListed(List.of(a, c, d, e), 3, t2,
                        "b leaving, e joining") + " ms");

                // scale in to two
                long t4 = System.nanoTime();
                containers.stop(c);
                containers.stop(d);
                timings.add("c and d dropped by all " + awaitListed(List.of(a, e), 1, t4, "c and d leaving") + " ms");
                int atScaleIn = written.get();
                Await.until(() -> written.get() >= atScaleIn + 5 * CHUNK, () -> "no writes with two members");
            } finally {
                writer.interrupt();
                writer.join(30_000);
            }
            assertThat(writeFailure.get()).as("the writer's puts").isNull();
            int keys = written.get();
            NodeContainers.Node e2 = containers.nodes().stream().filter(n -> n.alias.equals("dns-e")).findFirst()
                    .orElseThrow();
            try {
                Await.until(Duration.ofSeconds(60), () -> e2.control.size(cache) == keys,
                        () -> "e holds " + e2.control.size(cache) + " of " + keys);
            } catch (AssertionError failed) {
                for (NodeContainers.Node n : List.of(a, e2)) {
                    System.out.println("---- " + n.alias + "'s busy threads:\n" + n.busyThreads());
                    System.out.println("---- " + n.alias + "'s ehrelay lines:");
                    n.container.getLogs().lines().filter(l -> l.contains("ehrelay") || l.contains("WARN")
                            || l.contains("ERROR")).limit(200).forEach(System.out::println);
                }
                throw failed;
            }
            for (NodeContainers.Node n : List.of(a, e2)) {
                assertThat(n.control.size(cache)).as(n.alias).isEqualTo(keys);
                assertThat(n.control.verify(cache, 0, keys, SIZE)).as(n.alias + ": missing, different")
                        .containsExactly(0, 0);
            }
            Await.until(() -> a.peersReachable() == 1 && e2.peersReachable() == 1,
                    () -> "peers reachable: a " + a.peersReachable() + ", e " + e2.peersReachable());
            System.out.printf("[dns %s] under writes (%d keys of %d B from a): %s; a and e equal, %d entries "
                    + "compared on each%n", transport, keys, SIZE, String.join(", ", timings), keys);
        }
    }
}
