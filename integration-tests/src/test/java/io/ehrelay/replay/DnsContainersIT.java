package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.ehrelay.contract.Await;

/**
 * {@code peerDiscovery=dns} for real: containers on the project's own (internal) Docker network share one network
 * alias, so Docker's embedded DNS answers that name with every running member's address, as a Kubernetes headless
 * Service does. Two nodes find each other by the name alone; a third started later is found, bootstraps and
 * receives; a stopped one leaves the others' lists once the name no longer answers with it (JGroups: once it left
 * the view); what is written after that reaches the remaining ones; every node compared ends with the same
 * entries. TCP, RMI and Hessian with {@code peerDiscovery=dns}; JGroups with its shipped DNS stack
 * ({@code DNS_PING}).
 */
class DnsContainersIT {

    private static final String NAME = "ehrelay-peers";
    private static final String DNS = "dns=" + NAME;

    private static int peers(NodeContainers.Node n) {
        try {
            return ((Number) n.managerAttribute("peersKnown", "Value")).intValue();
        } catch (Exception e) {
            return -1;
        }
    }

    private static int reachable(NodeContainers.Node n) {
        try {
            return ((Number) n.managerAttribute("peersReachable", "Value")).intValue();
        } catch (Exception e) {
            return -1;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rmi", "hessian", "jgroups"})
    void nodesFoundByOneDnsName_joinBootstrapLeave_andEndEqual(String transport) throws Exception {
        try (NodeContainers containers = new NodeContainers(transport)) {
            NodeContainers.Node a = containers.start("dns-a", "-Xmx256m", DNS);
            NodeContainers.Node b = containers.start("dns-b", "-Xmx256m", DNS);
            Await.until(Duration.ofSeconds(30), () -> peers(a) == 1 && peers(b) == 1 && reachable(a) == 1,
                    () -> "by the name alone: a knows " + peers(a) + ", b " + peers(b));
            a.control.write("bootstrapped", 0, 2000, 512);
            Await.until(() -> b.control.size("bootstrapped") == 2000, () -> "b has " + b.control.size("bootstrapped"));

            // a third member: its start looks the name up, bootstraps (synchronously) and is found by the others
            long started = System.nanoTime();
            NodeContainers.Node c = containers.start("dns-c", "-Xmx256m", DNS);
            assertThat(c.control.size("bootstrapped")).as("bootstrapped from a member the name gave").isEqualTo(2000);
            Await.until(Duration.ofSeconds(30), () -> peers(a) == 2 && peers(b) == 2 && peers(c) == 2,
                    () -> "c not found: a knows " + peers(a) + ", b " + peers(b) + ", c " + peers(c));
            long joinedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            c.control.resetArrivals("bootstrapped");
            long wrote = System.nanoTime();
            a.control.write("bootstrapped", 2000, 1, 512);
            Await.until(() -> c.control.arrivals("bootstrapped")[0] == 1, () -> "c received nothing live");
            long firstEventMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - wrote);

            // a leaves (SIGTERM, as a rolling restart does): the name stops answering with it
            long stopped = System.nanoTime();
            containers.stop(a);
            Await.until(Duration.ofSeconds(30), () -> peers(b) == 1 && peers(c) == 1,
                    () -> "a still listed: b knows " + peers(b) + ", c " + peers(c));
            long droppedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped);

            c.control.write("bootstrapped", 3000, 500, 512);
            Await.until(() -> b.control.size("bootstrapped") == 2501, () -> "b has " + b.control.size("bootstrapped"));
            for (NodeContainers.Node n : new NodeContainers.Node[] {b, c}) {
                assertThat(n.control.verify("bootstrapped", 0, 2001, 512)).as(n.alias).containsExactly(0, 0);
                assertThat(n.control.verify("bootstrapped", 3000, 500, 512)).as(n.alias).containsExactly(0, 0);
                assertThat(n.cacheCount("bootstrapped", "failed")).as(n.alias + " failed").isZero();
            }
            System.out.printf("[dns %s] c's start to listed by every member: %d ms (its first live event %d ms "
                    + "after the write); a stopped to dropped by the others: %d ms; entries compared: %d on each of "
                    + "2 nodes%n", transport, joinedMillis, firstEventMillis, droppedMillis, 2501);
        }
    }
}
