package io.ehrelay.replay;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import javax.management.JMX;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import io.ehrelay.it.NodeControlMBean;
import io.ehrelay.metrics.ObjectNames;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.ImageFromDockerfile;
import org.testcontainers.utility.MountableFile;

/**
 * Node containers for the suites: the node image (built from {@code docker/node} on the base image, with the
 * project's jars), an internal Docker network (no route out), and for each node a remote JMX connection from
 * this JVM to the container's own address, through which the test drives it and reads its metrics.
 */
final class NodeContainers implements AutoCloseable {

    static final int PORT = 40001;
    private static ImageFromDockerfile image;

    private final Network network;
    private final String transport;
    private final List<Node> nodes = new ArrayList<>();

    /** Nodes of {@code transport} on an internal network: no route out of it. */
    NodeContainers(String transport) {
        this(transport, true);
    }

    /**
     * @param internal {@code false} only for multicast: Docker's isolation rules for internal networks drop
     *                 every packet addressed outside the subnet, multicast groups included. The nodes still
     *                 address nothing but each other and the group, with TTL 1.
     */
    NodeContainers(String transport, boolean internal) {
        this.transport = transport;
        network = Network.builder().createNetworkCmdModifier(cmd -> cmd.withInternal(internal)).build();
    }

    /** One running node container. */
    static final class Node {
        final String alias;
        final String transport;
        final GenericContainer<?> container;
        final String address;
        final JMXConnector jmx;
        final MBeanServerConnection mbeans;
        final NodeControlMBean control;

        Node(String alias, String transport, GenericContainer<?> container) throws IOException {
            this.alias = alias;
            this.transport = transport;
            this.container = container;
            this.address = container.getContainerInfo().getNetworkSettings().getNetworks().values().iterator().next()
                    .getIpAddress();
            this.jmx = JMXConnectorFactory.connect(new JMXServiceURL(
                    "service:jmx:rmi:///jndi/rmi://" + address + ":9010/jmxrmi"));
            this.mbeans = jmx.getMBeanServerConnection();
            try {
                this.control = JMX.newMBeanProxy(mbeans, new ObjectName("io.ehrelay.it:type=Node"),
                        NodeControlMBean.class);
            } catch (Exception e) {
                throw new IOException(e);
            }
        }

        /** A metric's {@code Count} (meters, counters, timers), read by its documented ObjectName. */
        long cacheCount(String cache, String metric) throws Exception {
            return ((Number) mbeans.getAttribute(ObjectNames.of(ObjectNames.cacheMetric(alias, transport, cache, metric)),
                    "Count")).longValue();
        }

        Object cacheAttribute(String cache, String metric, String attribute) throws Exception {
            return mbeans.getAttribute(ObjectNames.of(ObjectNames.cacheMetric(alias, transport, cache, metric)), attribute);
        }

        /** The {@code peersKnown} gauge, or -1 while it cannot be read (the node starting or stopping). */
        int peersKnown() {
            return managerGauge("peersKnown");
        }

        /** The {@code peersReachable} gauge, or -1 while it cannot be read. */
        int peersReachable() {
            return managerGauge("peersReachable");
        }

        private int managerGauge(String metric) {
            try {
                return ((Number) managerAttribute(metric, "Value")).intValue();
            } catch (Exception e) {
                return -1;
            }
        }

        Object managerAttribute(String metric, String attribute) throws Exception {
            return mbeans.getAttribute(ObjectNames.of(ObjectNames.cacheManagerMetric(alias, transport, metric)), attribute);
        }

        /**
         * The node's ehrelay, JGroups and RMI threads that are not idle, with their top frames (over JMX: the
         * image has a JRE without jcmd), for a failure message; what went wrong if it cannot be read.
         */
        String busyThreads() {
            try {
                ThreadMXBean threads = ManagementFactory
                        .newPlatformMXBeanProxy(mbeans, ManagementFactory.THREAD_MXBEAN_NAME,
                                ThreadMXBean.class);
                StringBuilder out = new StringBuilder();
                for (ThreadInfo t : threads.dumpAllThreads(true, false)) {
                    String name = t.getThreadName();
                    StackTraceElement[] stack = t.getStackTrace();
                    if (NodeProcess.waitsForWork(Arrays.toString(stack))
                            || !(name.contains("ehrelay") || name.contains("jgroups") || name.contains("Connection")
                            || name.contains("RMI") || name.contains(",containers,"))) {
                        continue;
                    }
                    out.append("  \"").append(name).append("\" ").append(t.getThreadState());
                    if (t.getLockName() != null) {
                        out.append(" on ").append(t.getLockName());
                        if (t.getLockOwnerName() != null) {
                            out.append(" held by \"").append(t.getLockOwnerName()).append('"');
                        }
                    }
                    out.append('\n');
                    for (int i = 0; i < Math.min(12, stack.length); i++) {
                        out.append("      at ").append(stack[i]).append('\n');
                    }
                }
                return out.length() == 0 ? "  (none busy)\n" : out.toString();
            } catch (Exception | Error e) {
                return "  (threads not readable: " + e + ")\n";
            }
        }
    }

    static synchronized ImageFromDockerfile image() throws IOException {
        if (image == null) {
            Path module = Path.of(System.getProperty("basedir", ".")).toAbsolutePath();
            Path lib = module.resolve("target").resolve("lib");
            try (Stream<Path> jars = Files.list(lib)) {
                if (jars.noneMatch(p -> p.getFileName().toString().matches("ehrelay-benchmarks-.*\\.jar"))) {
                    throw new IOException("no replay harness (ehrelay-benchmarks) in " + lib
                            + ": the container suites run after 'package'");
                }
            }
            image = new ImageFromDockerfile("ehrelay/node-it", true)
                    .withFileFromPath("Dockerfile", module.resolve("docker/node/Dockerfile"))
                    .withFileFromPath("entrypoint.sh", module.resolve("docker/node/entrypoint.sh"))
                    .withFileFromPath("lib", lib);
        }
        return image;
    }

    /**
     * Starts a node named {@code alias} (also its host name on the network) with the given arguments. With
     * {@code dns=<name>} the container answers to {@code <name>} too: Docker's embedded DNS then answers that name
     * with the address of every running container that has it, as a Kubernetes headless Service does.
     */
    Node start(String alias, String javaOpts, String... args) throws IOException {
        return start(alias, javaOpts, Map.of(), args);
    }

    /** As {@link #start(String, String, String...)}, with files of this host copied into the container first. */
    Node start(String alias, String javaOpts, Map<Path, String> files, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add("name=" + alias);
        cmd.add("port=" + PORT);
        cmd.add("transport=" + transport);
        cmd.addAll(List.of(args));
        List<String> aliases = new ArrayList<>(List.of(alias));
        for (String a : args) {
            if (a.startsWith("dns=")) {
                aliases.add(a.substring(4));
            }
        }
        GenericContainer<?> c = new GenericContainer<>(image())
                .withNetwork(network)
                .withNetworkAliases(aliases.toArray(new String[0]))
                .withCreateContainerCmdModifier(cmd2 -> cmd2.withHostName(alias))
                .withEnv("NODE_JAVA_OPTS", javaOpts)
                .withCommand(cmd.toArray(new String[0]))
                .waitingFor(Wait.forLogMessage(".*NODE READY.*\\n", 1).withStartupTimeout(Duration.ofMinutes(3)));
        for (Map.Entry<Path, String> f : files.entrySet()) {
            c.withCopyFileToContainer(MountableFile.forHostPath(f.getKey()), f.getValue());
        }
        c.start();
        Node n = new Node(alias, transport, c);
        nodes.add(n);
        return n;
    }

    /** The nodes running now, in the order they started. */
    List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /** Stops one node's container (SIGTERM: its CacheManager shuts down), as a rolling restart does. */
    void stop(Node n) {
        try {
            n.jmx.close();
        } catch (IOException e) {
            // the container is going anyway
        }
        n.container.stop();
        nodes.remove(n);
    }

    @Override
    public void close() {
        for (Node n : nodes) {
            try {
                n.jmx.close();
            } catch (IOException e) {
                // the container is going anyway
            }
            n.container.stop();
        }
        nodes.clear();
        network.close();
    }
}
