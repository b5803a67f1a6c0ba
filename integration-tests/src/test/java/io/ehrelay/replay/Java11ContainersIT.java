package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Stream;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import io.ehrelay.metrics.ObjectNames;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;

/**
 * The Java 11 promise at run time: nodes on a real Java 11 runtime (Debian bullseye's
 * {@code openjdk-11-jre-headless}, {@code docker/base-image.sh 11}) run the published jars — JGroups on its 5.3
 * line — as an application would ({@code io.ehrelay.it11.Java11Node}, compiled for Java 11), each in its own
 * container on the suite's internal network. Per transport: a bootstrap, put, update and remove both ways, and a
 * value of a class no allow-list admits refused by the Java 11 receiver, counted in {@code rejected} and its key
 * dropped. And a mixed pair: a Java 11 node with a Java 17 node.
 */
@Timeout(600)
class Java11ContainersIT {

    private static final int PORT = 40001;
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Map<Integer, ImageFromDockerfile> IMAGES = new HashMap<>();

    private Network network;
    private final List<GenericContainer<?>> containers = new ArrayList<>();
    private final List<JMXConnector> connections = new ArrayList<>();

    /**
     * The node program's MBean ({@code io.ehrelay.it11.Java11NodeMBean}), called by name: its class is compiled
     * for Java 11 apart from this module and is not on the suite's class path.
     */
    private static final class App {
        private static final String[] ONE = {String.class.getName()};
        private static final String[] TWO = {String.class.getName(), String.class.getName()};
        private static final String[] THREE = {String.class.getName(), String.class.getName(),
            String.class.getName()};
        private final MBeanServerConnection mbeans;
        private final ObjectName name;

        App(MBeanServerConnection mbeans) throws Exception {
            this.mbeans = mbeans;
            this.name = new ObjectName("io.ehrelay.it11:type=Node");
        }

        private Object call(String op, Object[] args, String[] types) {
            try {
                return mbeans.invoke(name, op, args, types);
            } catch (Exception e) {
                throw new IllegalStateException(op + " on the node failed", e);
            }
        }

        String getJavaVersion() {
            try {
                return (String) mbeans.getAttribute(name, "JavaVersion");
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        void put(String cache, String key, String value) {
            call("put", new Object[] {cache, key, value}, THREE);
        }

        void putUnlisted(String cache, String key) {
            call("putUnlisted", new Object[] {cache, key}, TWO);
        }

        String get(String cache, String key) {
            return (String) call("get", new Object[] {cache, key}, TWO);
        }

        void remove(String cache, String key) {
            call("remove", new Object[] {cache, key}, TWO);
        }

        int size(String cache) {
            return (Integer) call("size", new Object[] {cache}, ONE);
        }

        int peers(String cache) {
            return (Integer) call("peers", new Object[] {cache}, ONE);
        }
    }

    /** One node container, driven over remote JMX. */
    private static final class Node {
        final String alias;
        final String transport;
        final MBeanServerConnection mbeans;
        final App app;

        Node(String alias, String transport, MBeanServerConnection mbeans) throws Exception {
            this.alias = alias;
            this.transport = transport;
            this.mbeans = mbeans;
            this.app = new App(mbeans);
        }

        long cacheCount(String cache, String metric) throws Exception {
            return ((Number) mbeans.getAttribute(ObjectNames.of(ObjectNames.cacheMetric(alias, transport, cache,
                    metric)), "Count")).longValue();
        }
    }

    @BeforeEach
    void setUp() {
        network = Network.builder().createNetworkCmdModifier(cmd -> cmd.withInternal(true)).build();
    }

    @AfterEach
    void tearDown() {
        for (JMXConnector c : connections) {
            try {
                c.close();
            } catch (IOException e) {
                // the container goes anyway
            }
        }
        for (GenericContainer<?> c : containers) {
            c.stop();
        }
        network.close();
    }

    /**
     * The node image on Java {@code java} (11 or 17): the module's runtime dependencies — the published provider
     * jars, Ehcache, SLF4J — with JGroups 5.3 in place of the newest line on Java 11, and the node program.
     */
    private static synchronized ImageFromDockerfile image(int java) throws IOException {
        ImageFromDockerfile image = IMAGES.get(java);
        if (image != null) {
            return image;
        }
        Path module = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
        Path target = module.resolve("target");
        image = new ImageFromDockerfile("ehrelay/node-java" + java + "-it", true)
                .withFileFromPath("Dockerfile", module.resolve("docker/node11/Dockerfile"))
                .withFileFromPath("entrypoint.sh", module.resolve("docker/node11/entrypoint.sh"))
                .withFileFromPath("classes", target.resolve("java11-classes"))
                .withBuildArg("BASE", java == 11 ? "ehrelay/jre11:bullseye" : "ehrelay/jre17:bookworm");
        List<Path> jars = new ArrayList<>();
        try (Stream<Path> lib = Files.list(target.resolve("lib"))) {
            lib.filter(p -> p.toString().endsWith(".jar"))
                    .filter(p -> java != 11 || !p.getFileName().toString().startsWith("jgroups-"))
                    .filter(p -> !p.getFileName().toString().startsWith("ehrelay-benchmarks-")) // the replay harness
                    .forEach(jars::add);
        }
        if (java == 11) {
            try (Stream<Path> lib = Files.list(target.resolve("lib-jgroups-java11"))) {
                lib.forEach(jars::add);
            }
        }
        for (Path jar : jars) {
            image.withFileFromPath("lib/" + jar.getFileName(), jar);
        }
        IMAGES.put(java, image);
        return image;
    }

    /** Starts a node on Java {@code java}; {@code peers} are the other nodes' aliases. */
    private Node start(int java, String transport, String alias, String... peers) throws Exception {
        GenericContainer<?> c = new GenericContainer<>(image(java))
                .withNetwork(network)
                .withNetworkAliases(alias)
                .withCreateContainerCmdModifier(cmd -> cmd.withHostName(alias))
                .withCommand("name=" + alias, "port=" + PORT, "transport=" + transport,
                        "peers=" + String.join("|", peers))
                .waitingFor(Wait.forLogMessage(".*NODE READY.*\\n", 1).withStartupTimeout(Duration.ofSeconds(90)));
        containers.add(c);
        c.start();
        String address = c.getContainerInfo().getNetworkSettings().getNetworks().values().iterator().next()
                .getIpAddress();
        JMXConnector jmx = JMXConnectorFactory.connect(new JMXServiceURL(
                "service:jmx:rmi:///jndi/rmi://" + address + ":9010/jmxrmi"));
        connections.add(jmx);
        Node n = new Node(alias, transport, jmx.getMBeanServerConnection());
        assertThat(n.app.getJavaVersion()).as("the JVM of %s", alias).startsWith(java == 11 ? "11." : "17.");
        return n;
    }

    private static void await(BooleanSupplier condition, Supplier<String> what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT.toSeconds() + " s: " + what.get());
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
    }

    private static void awaitValue(Node n, String key, String expected) throws InterruptedException {
        await(() -> Objects.equals(n.app.get("replay", key), expected),
                () -> n.alias + " holds " + key + "=" + n.app.get("replay", key) + ", expected " + expected);
    }

    /** Put, update and remove from {@code from} arrive at {@code to}; and the other way. */
    private static void replicatesBothWays(Node from, Node to) throws InterruptedException {
        // each started before the other could be resolved: replicate once both list each other
        await(() -> from.app.peers("replay") == 1 && to.app.peers("replay") == 1,
                () -> "peers listed: " + from.alias + " " + from.app.peers("replay") + ", " + to.alias + " "
                        + to.app.peers("replay"));
        from.app.put("replay", "k-" + from.alias, "v1");
        awaitValue(to, "k-" + from.alias, "v1");
        from.app.put("replay", "k-" + from.alias, "v2");
        awaitValue(to, "k-" + from.alias, "v2");
        from.app.remove("replay", "k-" + from.alias);
        awaitValue(to, "k-" + from.alias, null);
        to.app.put("replay", "k-" + to.alias, "back");
        awaitValue(from, "k-" + to.alias, "back");
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "rmi", "hessian", "jgroups"})
    void twoJava11Nodes_bootstrapReplicate_andRefuseAnUnlistedClass(String transport) throws Exception {
        Node a = start(11, transport, "a", "b");
        for (int i = 0; i < 20; i++) {
            a.app.put("bootstrapped", "pre-" + i, "v" + i);
        }
        Node b = start(11, transport, "b", "a");
        // loaded from a while b started (synchronous bootstrap)
        await(() -> b.app.size("bootstrapped") == 20, () -> "b bootstrapped " + b.app.size("bootstrapped") + " of 20");
        assertThat(b.app.get("bootstrapped", "pre-7")).isEqualTo("v7");
        replicatesBothWays(a, b);
        // the deserialization guard on Java 11: a class outside the allow-list is refused, counted, its key dropped
        a.app.put("replay", "guarded", "plain");
        awaitValue(b, "guarded", "plain");
        long rejectedBefore = b.cacheCount("replay", "rejected");
        a.app.putUnlisted("replay", "guarded");
        awaitValue(b, "guarded", null);
        assertThat(a.app.get("replay", "guarded")).isEqualTo("Unlisted(guarded)");
        await(() -> {
            try {
                return b.cacheCount("replay", "rejected") > rejectedBefore;
            } catch (Exception e) {
                return false;
            }
        }, () -> "b counted no rejected value");
        System.out.printf("[%s] two Java 11 nodes (%s): bootstrap, put, update, remove both ways, unlisted class "
                + "refused and counted%n", transport, b.app.getJavaVersion());
    }

    @Test
    void aJava11Node_andAJava17Node_replicateBothWays() throws Exception {
        Node old = start(11, "tcp", "eleven", "seventeen");
        for (int i = 0; i < 20; i++) {
            old.app.put("bootstrapped", "pre-" + i, "v" + i);
        }
        Node current = start(17, "tcp", "seventeen", "eleven");
        await(() -> current.app.size("bootstrapped") == 20,
                () -> "the Java 17 node bootstrapped " + current.app.size("bootstrapped") + " of 20");
        replicatesBothWays(old, current);
        replicatesBothWays(current, old);
        System.out.printf("[tcp] a Java %s node and a Java %s node replicate both ways%n",
                old.app.getJavaVersion(), current.app.getJavaVersion());
    }
}
