package io.ehrelay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The public API line and the package graph of provider-api's main classes, read from the compiled classes
 * (jdeps for the dependencies): no package cycles, and public types only where users or transport authors are
 * meant to see them (everything else lives in {@code io.ehrelay.internal…} or is package-private).
 */
class ArchitectureTest {

    private static final Path CLASSES = Paths.get("target", "classes");

    /** The public types outside {@code io.ehrelay.internal}: what users and transport authors see. */
    private static final Set<String> API = new TreeSet<>(Arrays.asList(
            // users: the factories' base classes, the entry point, exception and policy types, JMX names
            "io.ehrelay.provider.Ehrelay",
            "io.ehrelay.provider.EhrelayBootstrapLoaderFactory",
            "io.ehrelay.provider.EhrelayPeerListenerFactory",
            "io.ehrelay.provider.EhrelayPeerProviderFactory",
            "io.ehrelay.provider.EhrelayReplicatorFactory",
            "io.ehrelay.config.InvalidConfigurationException",
            "io.ehrelay.config.OverflowPolicy",
            "io.ehrelay.config.SyncFailurePolicy",
            "io.ehrelay.codec.RejectedClassException",
            "io.ehrelay.metrics.ObjectNames",
            // transport authors
            "io.ehrelay.spi.Batch",
            "io.ehrelay.spi.Batch$Pieces",
            "io.ehrelay.spi.Clock",
            "io.ehrelay.spi.HeartbeatFormat",
            "io.ehrelay.spi.InboundHandler",
            "io.ehrelay.spi.InboundHandler$ChunkSink",
            "io.ehrelay.spi.InboundHandler$StateCursor",
            "io.ehrelay.spi.ListenerConfig",
            "io.ehrelay.spi.LocalCachePeer",
            "io.ehrelay.spi.MalformedFrameException",
            "io.ehrelay.spi.Op",
            "io.ehrelay.spi.Peer",
            "io.ehrelay.spi.PeerGate",
            "io.ehrelay.spi.ClusterSecret",
            "io.ehrelay.spi.ReplicationEvent",
            "io.ehrelay.spi.Transport",
            "io.ehrelay.spi.TransportContext",
            "io.ehrelay.spi.MetricNames",
            "io.ehrelay.spi.TransportMetrics",
            "io.ehrelay.spi.TransportMetrics$Count",
            "io.ehrelay.spi.TransportSettings"));

    private static Map<String, Set<String>> graph;

    @Test
    void publicTypes_outsideInternal_areExactlyTheApi() throws Exception {
        Set<String> found = new TreeSet<>();
        for (String name : classNames()) {
            if (name.startsWith("io.ehrelay.internal") || name.endsWith("package-info")) {
                continue;
            }
            Class<?> c = Class.forName(name, false, getClass().getClassLoader());
            if (Modifier.isPublic(c.getModifiers()) && !c.isAnonymousClass() && !c.isSynthetic()
                    && (c.getEnclosingClass() == null || Modifier.isPublic(c.getEnclosingClass().getModifiers()))) {
                found.add(name);
            }
        }
        assertThat(found).as("public types outside io.ehrelay.internal: add to the API on purpose, or make it "
                + "package-private / internal").containsExactlyElementsOf(API);
    }

    @Test
    void noPackageCycles() {
        Map<String, Set<String>> graph = packageGraph();
        assertThat(graph).as("jdeps found the packages").containsKeys("io.ehrelay.spi", "io.ehrelay.provider",
                "io.ehrelay.internal.engine");
        assertThat(cycles(graph)).as("package cycles").isEmpty();
    }

    @Test
    void theSpi_dependsOnNothingOfEhrelayButItself() {
        Map<String, Set<String>> graph = packageGraph();
        assertThat(graph.get("io.ehrelay.spi")).allMatch(p -> p.equals("io.ehrelay.spi"));
    }

    @Test
    void theCycleFinder_findsACycle() {
        Map<String, Set<String>> g = new HashMap<>();
        g.put("a", new HashSet<>(Arrays.asList("b")));
        g.put("b", new HashSet<>(Arrays.asList("c")));
        g.put("c", new HashSet<>(Arrays.asList("a")));
        g.put("d", new HashSet<>(Arrays.asList("a")));
        assertThat(cycles(g)).containsExactly(new TreeSet<>(Arrays.asList("a", "b", "c")));
    }

    private static List<String> classNames() throws IOException {
        List<String> names = new ArrayList<>();
        try (Stream<Path> files = Files.walk(CLASSES)) {
            files.filter(p -> p.toString().endsWith(".class")).forEach(p -> {
                String rel = CLASSES.relativize(p).toString();
                names.add(rel.substring(0, rel.length() - ".class".length()).replace('/', '.')
                        .replace('\\', '.'));
            });
        }
        names.removeIf(n -> n.matches(".*\\$\\d+.*") || n.contains("$$Lambda"));
        return names;
    }

    /** Package → the ehrelay packages it uses, from jdeps (run once per test class). */
    private static synchronized Map<String, Set<String>> packageGraph() {
        if (graph == null) {
            graph = readPackageGraph();
        }
        return graph;
    }

    private static Map<String, Set<String>> readPackageGraph() {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() ->
                new AssertionError("this JDK has no jdeps"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:package", "-filter:none",
                CLASSES.toString());
        assertThat(rc).as("jdeps: %s", err).isZero();
        Map<String, Set<String>> graph = new HashMap<>();
        Matcher m = Pattern.compile("^\\s+(io\\.ehrelay[\\w.]*)\\s+->\\s+(io\\.ehrelay[\\w.]*)\\s", Pattern.MULTILINE)
                .matcher(out.toString());
        while (m.find()) {
            graph.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(m.group(2));
        }
        return graph;
    }

    /** The strongly connected components of more than one package (Tarjan). */
    private static List<Set<String>> cycles(Map<String, Set<String>> graph) {
        List<Set<String>> out = new ArrayList<>();
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new HashSet<>();
        int[] next = {0};
        for (String v : new TreeSet<>(graph.keySet())) {
            if (!index.containsKey(v)) {
                connect(v, graph, index, low, stack, onStack, next, out);
            }
        }
        return out;
    }

    private static void connect(String v, Map<String, Set<String>> g, Map<String, Integer> index,
                                Map<String, Integer> low, Deque<String> stack, Set<String> onStack,
                                int[] next, List<Set<String>> out) {
        index.put(v, next[0]);
        low.put(v, next[0]++);
        stack.push(v);
        onStack.add(v);
        for (String w : g.getOrDefault(v, new HashSet<>())) {
            if (w.equals(v)) {
                continue;
            }
            if (!index.containsKey(w)) {
                connect(w, g, index, low, stack, onStack, next, out);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> component = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            if (component.size() > 1) {
                out.add(component);
            }
        }
    }
}
