package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.ByteArrayInputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import io.ehrelay.config.InvalidConfigurationException;
import net.sf.ehcache.Cache;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import net.sf.ehcache.bootstrap.BootstrapCacheLoaderFactory;
import net.sf.ehcache.config.Configuration;
import net.sf.ehcache.distribution.CacheManagerPeerListenerFactory;
import net.sf.ehcache.distribution.CacheManagerPeerProviderFactory;
import net.sf.ehcache.event.CacheEventListenerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The reference pages checked against the code, so that no hand-kept list drifts: every property a factory
 * accepts is in {@code docs/configuration.md} and every property there is accepted by some factory of its kind;
 * every metric a running node registers (on each transport) is in {@code docs/metrics.md}, and every metric there
 * is registered by some transport.
 */
@Timeout(300)
class ReferenceDocsTest {

    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern ACCEPTED = Pattern.compile("accepted properties are \\[([^\\]]*)\\]");
    private static final Pattern NAME = Pattern.compile("`([A-Za-z][A-Za-z0-9]*)`");
    /** Transport name → the prefix of its four factories' class names. */
    private static final Map<String, String> PREFIX = new LinkedHashMap<>();

    static {
        PREFIX.put("tcp", "io.ehrelay.tcp.Tcp");
        PREFIX.put("rmi", "io.ehrelay.rmi.Rmi");
        PREFIX.put("hessian", "io.ehrelay.hessian.Hessian");
        PREFIX.put("jgroups", "io.ehrelay.jgroups.JGroups");
    }

    enum Kind {
        REPLICATOR("CacheReplicatorFactory", "Replicator"),
        BOOTSTRAP("BootstrapCacheLoaderFactory", "Bootstrap"),
        PROVIDER("CacheManagerPeerProviderFactory", "Peer provider"),
        LISTENER("CacheManagerPeerListenerFactory", "Peer listener");

        final String suffix;
        final String commonSection;

        Kind(String suffix, String commonSection) {
            this.suffix = suffix;
            this.commonSection = commonSection;
        }
    }

    // ---------------------------------------------------------------------------------------------- properties

    @Test
    void everyPropertyTheFactoriesAccept_isInConfigurationMd_andNoOther() throws Exception {
        Map<String, Map<String, Set<String>>> doc = documentedProperties(); // section → (kind → names)
        Set<String> missing = new TreeSet<>();
        Map<Kind, Set<String>> acceptedByKind = new LinkedHashMap<>();
        for (Kind kind : Kind.values()) {
            acceptedByKind.put(kind, new TreeSet<>());
        }
        CacheManager cm = CacheManager.newInstance(new Configuration().name("reference-docs"));
        try {
            for (Map.Entry<String, String> t : PREFIX.entrySet()) {
                for (Kind kind : Kind.values()) {
                    Set<String> accepted = accepted(t.getValue() + kind.suffix, kind, cm);
                    if (accepted == null) {
                        continue; // JGroups has no listener factory
                    }
                    acceptedByKind.get(kind).addAll(accepted);
                    Set<String> documented = new TreeSet<>(doc.getOrDefault(kind.commonSection, Map.of())
                            .getOrDefault(kind.name(), Set.of()));
                    documented.addAll(doc.getOrDefault(t.getKey(), Map.of()).getOrDefault(kind.name(), Set.of()));
                    for (String name : accepted) {
                        if (!documented.contains(name)) {
                            missing.add(t.getKey() + " " + kind.suffix + ": " + name);
                        }
                    }
                }
            }
        } finally {
            cm.shutdown();
        }
        assertThat(missing).as("properties the code accepts but docs/configuration.md does not list "
                + "(in the kind's common table or the transport's section)").isEmpty();

        Set<String> unknown = new TreeSet<>();
        for (Map.Entry<String, Map<String, Set<String>>> section : doc.entrySet()) {
            for (Map.Entry<String, Set<String>> k : section.getValue().entrySet()) {
                Kind kind = Kind.valueOf(k.getKey());
                for (String name : k.getValue()) {
                    if (!acceptedByKind.get(kind).contains(name)) {
                        unknown.add(section.getKey() + " / " + kind.suffix + ": " + name);
                    }
                }
            }
        }
        assertThat(unknown).as("properties docs/configuration.md lists but no factory of that kind accepts").isEmpty();
        assertThat(acceptedByKind.get(Kind.PROVIDER)).contains("queueMaxBytes", "allowedClasses", "rmiUrls",
                "unauthenticatedPeers", "channelName");
    }

    /**
     * The properties a factory accepts, read from its own refusal of an unknown one (which lists every name it
     * read). The provider is asked twice, with manual and with automatic discovery, since it reads the multicast
     * properties only then.
     */
    private static Set<String> accepted(String className, Kind kind, CacheManager cm) throws Exception {
        Class<?> type;
        try {
            type = Class.forName(className);
        } catch (ClassNotFoundException e) {
            if (kind == Kind.LISTENER && className.startsWith("io.ehrelay.jgroups.")) {
                return null;
            }
            throw e;
        }
        Object factory = type.getDeclaredConstructor().newInstance();
        Set<String> names = new TreeSet<>();
        List<Properties> variants = new ArrayList<>();
        variants.add(props("noSuchProperty=1"));
        if (kind == Kind.PROVIDER && !className.startsWith("io.ehrelay.jgroups.")) {
            variants.add(props("noSuchProperty=1", "peerDiscovery=automatic", "multicastGroupAddress=230.0.0.1",
                    "multicastGroupPort=4446", "hostName=127.0.0.1", "timeToLive=0"));
        }
        for (Properties p : variants) {
            try {
                switch (kind) {
                    case REPLICATOR:
                        ((CacheEventListenerFactory) factory).createCacheEventListener(p);
                        break;
                    case BOOTSTRAP:
                        ((BootstrapCacheLoaderFactory<?>) factory).createBootstrapCacheLoader(p);
                        break;
                    case PROVIDER:
                        ((CacheManagerPeerProviderFactory) factory).createCachePeerProvider(cm, p);
                        break;
                    default:
                        ((CacheManagerPeerListenerFactory) factory).createCachePeerListener(cm, p);
                }
                fail(className + " accepted an unknown property");
            } catch (InvalidConfigurationException e) {
                Matcher m = ACCEPTED.matcher(e.getMessage());
                assertThat(m.find()).as("%s refused noSuchProperty naming what it accepts: %s", className,
                        e.getMessage()).isTrue();
                for (String name : m.group(1).split(",")) {
                    if (!name.trim().isEmpty()) {
                        names.add(name.trim());
                    }
                }
            }
        }
        return names;
    }

    private static Properties props(String... entries) {
        Properties p = new Properties();
        for (String e : entries) {
            int eq = e.indexOf('=');
            p.setProperty(e.substring(0, eq), e.substring(eq + 1));
        }
        return p;
    }

    /**
     * The property tables of configuration.md (tables whose header starts with {@code | property |}): per section
     * — a common section ({@code ## Replicator …}) or a transport's ({@code ## TCP properties} → {@code tcp}) —
     * and per factory kind, the back-quoted names of each row's first cell. A transport's section says which
     * factory each table is for ({@code On `cacheManagerPeerProviderFactory`:}).
     */
    static Map<String, Map<String, Set<String>>> documentedProperties() throws Exception {
        List<String> lines = Files.readAllLines(ROOT.resolve("docs/configuration.md"));
        Map<String, Map<String, Set<String>>> out = new LinkedHashMap<>();
        String section = null;
        Kind kind = null;
        boolean inTable = false;
        for (String line : lines) {
            if (line.startsWith("## ")) {
                String title = line.substring(3);
                section = null;
                kind = null;
                for (Kind k : Kind.values()) {
                    if (title.startsWith(k.commonSection + " (")) {
                        section = k.commonSection;
                        kind = k;
                    }
                }
                for (String t : PREFIX.keySet()) {
                    if (title.toLowerCase().equals(t + " properties")) {
                        section = t;
                    }
                }
                inTable = false;
                continue;
            }
            if (section == null) {
                continue;
            }
            if (line.startsWith("On `cacheManagerPeerProviderFactory`")) {
                kind = Kind.PROVIDER;
            } else if (line.startsWith("On `cacheManagerPeerListenerFactory`")) {
                kind = Kind.LISTENER;
            } else if (line.startsWith("On `cacheEventListenerFactory`")) {
                kind = Kind.REPLICATOR;
            } else if (line.startsWith("On `bootstrapCacheLoaderFactory`")) {
                kind = Kind.BOOTSTRAP;
            }
            if (line.startsWith("| property |")) {
                inTable = true;
                continue;
            }
            if (!line.startsWith("|")) {
                inTable = false;
                continue;
            }
            if (!inTable || line.startsWith("|---")) {
                continue;
            }
            assertThat(kind).as("configuration.md: a property table in section %s without its factory", section)
                    .isNotNull();
            String first = line.substring(1, line.indexOf('|', 1));
            Matcher m = NAME.matcher(first);
            while (m.find()) {
                out.computeIfAbsent(section, s -> new LinkedHashMap<>())
                        .computeIfAbsent(kind.name(), k -> new TreeSet<>()).add(m.group(1));
            }
        }
        assertThat(out).as("configuration.md sections with property tables").containsKeys("Replicator",
                "Bootstrap", "Peer provider", "Peer listener", "tcp", "rmi", "hessian", "jgroups");
        return out;
    }

    // ------------------------------------------------------------------------------------------------- metrics

    @Test
    void everyMetricARunningNodeRegisters_isInMetricsMd_andNoOther() throws Exception {
        Set<String> documented = documentedMetrics();
        Set<String> convergenceBeans = new TreeSet<>();
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<String> registered = new TreeSet<>();
        Set<String> undocumented = new TreeSet<>();
        for (String transport : PREFIX.keySet()) {
            int[] ports = {ReplayNode.freePort(), ReplayNode.freePort()};
            CacheManager a = null;
            CacheManager b = null;
            try {
                a = start(transport, "refdoc-a-" + transport, 0, ports);
                b = start(transport, "refdoc-b-" + transport, 1, ports);
                Cache writer = a.getCache("replay");
                Cache reader = b.getCache("replay");
                long deadline = System.nanoTime() + 60_000_000_000L;
                int i = 0;
                while (reader.getSize() < 10 && System.nanoTime() < deadline) {
                    writer.put(new Element("k" + (i++ % 10), new ArrayList<>(List.of("v", i))));
                    Thread.sleep(50);
                }
                assertThat(reader.getSize()).as("%s: elements replicated to the reader", transport).isEqualTo(10);
                Set<ObjectName> names = server.queryNames(new ObjectName("io.ehrelay:*"), null);
                for (ObjectName n : names) {
                    String cmName = n.getKeyProperty("cacheManager");
                    if (!cmName.startsWith("refdoc-") && !cmName.startsWith("\"refdoc-")) {
                        continue;
                    }
                    String type = n.getKeyProperty("type");
                    assertThat(type).as("%s: type of %s", transport, n).isIn("CacheManager", "Cache", "Peer",
                            "Convergence");
                    Set<String> keys = new TreeSet<>(n.getKeyPropertyList().keySet());
                    if ("Convergence".equals(type)) {
                        // not a metric: the MBean with the checkNow operation, named on the page
                        assertThat(keys).isEqualTo(Set.of("type", "cacheManager", "transport"));
                        convergenceBeans.add(transport);
                        continue;
                    }
                    assertThat(keys).as("the documented ObjectName keys of %s", n).isEqualTo("Cache".equals(type)
                            ? Set.of("type", "cacheManager", "transport", "cache", "name")
                            : "Peer".equals(type) ? Set.of("type", "cacheManager", "transport", "peer", "name")
                            : Set.of("type", "cacheManager", "transport", "name"));
                    String metric = n.getKeyProperty("name");
                    registered.add(metric);
                    if (!documented.contains(metric)) {
                        undocumented.add(transport + ": " + n);
                    }
                }
            } finally {
                if (b != null) {
                    b.shutdown();
                }
                if (a != null) {
                    a.shutdown();
                }
            }
        }
        // automatic discovery registers its own meter: one TCP node multicasting on lo (TTL 0)
        String xml = "<ehcache name=\"refdoc-auto\" updateCheck=\"false\" monitoring=\"off\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"io.ehrelay.tcp.TcpCacheManagerPeerProviderFactory\"\n"
                + "      properties=\"peerDiscovery=automatic, multicastGroupAddress=230.0.0.69, multicastGroupPort="
                + ReplayNode.freePort() + ", timeToLive=0, hostName=127.0.0.1\"/>\n"
                + "  <cacheManagerPeerListenerFactory class=\"io.ehrelay.tcp.TcpCacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=127.0.0.1, port=0\"/>\n"
                + "  <cache name=\"c\" maxEntriesLocalHeap=\"10\">\n"
                + "    <cacheEventListenerFactory class=\"io.ehrelay.tcp.TcpCacheReplicatorFactory\"/>\n"
                + "  </cache>\n</ehcache>\n";
        CacheManager auto = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        try {
            auto.getCache("c").put(new Element("k", "v"));
            for (ObjectName n : server.queryNames(new ObjectName("io.ehrelay:cacheManager=refdoc-auto,*"), null)) {
                if ("Convergence".equals(n.getKeyProperty("type"))) {
                    continue; // the MBean with operations, checked above
                }
                registered.add(n.getKeyProperty("name"));
                if (!documented.contains(n.getKeyProperty("name"))) {
                    undocumented.add("tcp, automatic discovery: " + n);
                }
            }
        } finally {
            auto.shutdown();
        }
        assertThat(undocumented).as("MBeans a running node registers that docs/metrics.md does not list").isEmpty();
        assertThat(convergenceBeans).as("transports whose nodes register the Convergence MBean")
                .containsExactlyInAnyOrderElementsOf(PREFIX.keySet());
        assertThat(Files.readString(ROOT.resolve("docs/metrics.md"))).contains(
                "io.ehrelay:type=Convergence,cacheManager=<cm>,transport=<transport>").contains("`checkNow`");
        Set<String> never = new TreeSet<>(documented);
        never.removeAll(registered);
        assertThat(never).as("metrics docs/metrics.md lists that no transport registered").isEmpty();
    }

    private static CacheManager start(String transport, String name, int index, int[] ports) {
        String xml = Profiles.faultXml(transport, name, index, ports, ports, "learnAllowedClasses=true");
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    /** The back-quoted names in the first cell of each row of metrics.md's tables whose header is {@code | metric |}. */
    static Set<String> documentedMetrics() throws Exception {
        Set<String> out = new TreeSet<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(ROOT.resolve("docs/metrics.md"))) {
            if (line.startsWith("| metric |")) {
                inTable = true;
                continue;
            }
            if (!line.startsWith("|")) {
                inTable = false;
                continue;
            }
            if (inTable && !line.startsWith("|---")) {
                Matcher m = NAME.matcher(line.substring(1, line.indexOf('|', 1)));
                while (m.find()) {
                    out.add(m.group(1));
                }
            }
        }
        assertThat(out).as("metrics.md's metric names").contains("queueEvents", "sendLatency");
        return out;
    }
}
