package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import io.ehrelay.frameworks.FrameworkNode;
import org.assertj.core.api.SoftAssertions;
import org.h2.tools.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hibernate 5.6 (hibernate-ehcache) and Spring 5.3 ({@code EhCacheCacheManager}) applications replicating their
 * Ehcache 2 caches through ehrelay, two node JVMs ({@link FrameworkNode}) on 127.0.0.1 per transport and profile,
 * one shared H2 database served by this JVM (TCP server on 127.0.0.1). Node A writes, node B reads:
 * <ol>
 * <li>an entity updated in A (region {@code items} replicated by copy, {@code notes} by invalidation): B's read
 * returns the new name, never the old one once every event A queued reached B (<em>settled</em>: B's
 * {@code received} for the region reaches A's {@code enqueued}; an event B cannot apply is received too); then B updates it without an optimistic
 * lock failure;</li>
 * <li>a tag added to the cached collection in A: B sees it;</li>
 * <li>the cacheable HQL query (query-results and update-timestamps regions replicated): B's result reflects A's
 * change;</li>
 * <li>Spring: a row changed and its keys evicted in A ({@code @CacheEvict}): B returns the new value; then
 * {@code @CachePut} in A: B returns the put value.</li>
 * </ol>
 * Profile {@code defaults}: the providers' defaults (only addresses and peers): B may miss, but must never read a
 * stale value. Profile {@code presets}: {@code allowedClasses} admits the frameworks' classes: B must also
 * <em>hit</em> the replicated values (a second-level-cache hit without SQL; a Spring value without running the
 * method) and reject nothing. A table of every (transport, profile, scenario) goes to {@code
 * target/frameworks-report.md}.
 */
@Timeout(240)
class FrameworksTest {

    static {
        // before H2's classes read it: the database server listens on 127.0.0.1 only
        System.setProperty("h2.bindAddress", "127.0.0.1");
    }

    /** The test application's own classes (entities, the Spring value {@code Greeting}). */
    static final String APP = "io.ehrelay.frameworks.**";

    /** The allow-list of profile {@code presets}. */
    static final String PRESETS = "@hibernate5|@spring|" + APP;

    /**
     * What ehrelay's {@code learnAllowedClasses=true} must offer after these applications ran: the presets (every
     * Hibernate and Spring class sent is one they admit) and the one application class that travels (entities
     * travel as their disassembled state, JDK types).
     */
    static final String LEARNED = "allowedClasses=@hibernate5|@spring|io.ehrelay.frameworks.Greeting";

    static final List<String> COPY = List.of("items", "items.tags", "default-query-results-region",
            "default-update-timestamps-region", "greetings", "pairs");
    static final List<String> INVALIDATION = List.of("notes", "notes.tags");
    static final List<String> ALL_CACHES = Stream.concat(COPY.stream(), INVALIDATION.stream()).toList();

    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(15);
    private static final Pattern REJECTED_CLASS =
            Pattern.compile("holding class (\\S+), which allowedClasses does not admit");

    private static Server h2;
    private static final List<String> ROWS = new ArrayList<>();
    private static final Set<String> TRAVELLED = new TreeSet<>();
    private static final Set<String> REJECTED = new TreeSet<>();
    private static long started;

    @TempDir
    Path dir;

    static Stream<Arguments> pairs() {
        List<Arguments> all = new ArrayList<>();
        // -Dehrelay.frameworks.transports=tcp,rmi / -Dehrelay.frameworks.profiles=presets narrow a run
        for (String transport : System.getProperty("ehrelay.frameworks.transports", "tcp,rmi,hessian,jgroups")
                .split(",")) {
            for (String profile : System.getProperty("ehrelay.frameworks.profiles", "defaults,presets").split(",")) {
                all.add(Arguments.of(transport, profile));
            }
        }
        return all.stream();
    }

    @BeforeAll
    static void startDatabase() throws Exception {
        started = System.nanoTime();
        h2 = Server.createTcpServer("-tcpPort", Integer.toString(ReplayNode.freePort()), "-ifNotExists",
                "-tcpDaemon").start();
    }

    @AfterAll
    static void report() throws Exception {
        if (h2 != null) {
            h2.stop();
        }
        StringBuilder sb = new StringBuilder("| transport | profile | scenario | stale reads | fresh | B hits | "
                + "B rejected | "
                + "B invalidated | notes |\n|---|---|---|---:|---|---|---:|---|---|\n");
        ROWS.forEach(r -> sb.append(r).append('\n'));
        sb.append("\nlearnedAllowedClasses of each node (what it sent beyond the JDK defaults):\n");
        TRAVELLED.forEach(c -> sb.append("- ").append(c).append('\n'));
        sb.append("\nClasses named by rejected WARN lines:\n");
        REJECTED.forEach(c -> sb.append("- ").append(c).append('\n'));
        sb.append(String.format("%nRun time: %.1f s%n", (System.nanoTime() - started) / 1e9));
        Path target = Path.of("target");
        if (Files.isDirectory(target)) {
            Files.writeString(target.resolve("frameworks-report.md"), sb);
        }
        System.out.println(sb);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("pairs")
    void hibernateAndSpring_writesInA_neverStaleInB(String transport, String profile) throws Exception {
        boolean presets = "presets".equals(profile);
        String db = "jdbc:h2:tcp://127.0.0.1:" + h2.getPort() + "/mem:fw_" + transport + "_" + profile
                + ";DB_CLOSE_DELAY=-1";
        Path log = dir.resolve("nodes.log");
        Files.createFile(log);
        try (Connection keep = DriverManager.getConnection(db, "sa", "")) {
            schema(keep);
            int[] ports = {ReplayNode.freePort(), ReplayNode.freePort()};
            Path xa = dir.resolve("a.xml");
            Path xb = dir.resolve("b.xml");
            Files.writeString(xa, ehcacheXml(transport, "fw-a", 0, ports, presets));
            Files.writeString(xb, ehcacheXml(transport, "fw-b", 1, ports, presets));
            // both JVMs start at once
            try (NodeProcess a = NodeProcess.start("A", "256m", FrameworkNode.class,
                    new ArrayList<>(List.of("xml=" + xa, "jdbc=" + db, "label=A")), log);
                 NodeProcess b = NodeProcess.start("B", "256m", FrameworkNode.class,
                         new ArrayList<>(List.of("xml=" + xb, "jdbc=" + db, "label=B")), log)) {
                a.expect("READY", deadline(120), l -> { }, b);
                b.expect("READY", deadline(120), l -> { }, a);
                assertThat(ask(a, "AWAIT_PEERS 1").get("peers")).isEqualTo("1");
                assertThat(ask(b, "AWAIT_PEERS 1").get("peers")).isEqualTo("1");
                Run run = new Run(transport, profile, a, b, log);
                run.entity("item", "items", true);
                run.entity("note", "notes", false);
                run.collection("item", "items");
                run.collection("note", "notes");
                run.query();
                run.spring();
                Map<String, String> m = ask(b, "METRICS " + String.join(" ", ALL_CACHES));
                if (presets) {
                    for (String cache : ALL_CACHES) {
                        run.soft.assertThat(count(m, cache + ".rejected"))
                                .as("%s: B rejected nothing in %s; ehrelay's log lines:%n%s", run.id, cache,
                                        ehrelayLog(log))
                                .isZero();
                    }
                } else {
                    // the writing node says so at once, once per class and cache, with the line to add
                    String nodes = Files.readString(log);
                    run.soft.assertThat(nodes).as("%s: the writer's ERROR", run.id)
                            .contains("cache 'items' replicates class org.hibernate.cache.internal."
                                    + "CacheKeyImplementation, which allowedClasses does not admit")
                            .contains("cache 'pairs' replicates class org.springframework.cache.interceptor."
                                    + "SimpleKey, which allowedClasses does not admit")
                            .contains("allowedClasses=@spring");
                    // the frameworks' classes are refused without the presets: B stays correct by invalidating the
                    // keys it holds that those writes changed (a refused write of a key B never held changes
                    // nothing there; before ordering, each refused key cleared B's whole cache)
                    for (String cache : List.of("items", "notes", "pairs")) {
                        run.soft.assertThat(count(m, cache + ".invalidated")).as("%s: B invalidated in %s", run.id,
                                cache).isPositive().isLessThanOrEqualTo(count(m, cache + ".rejected"));
                    }
                }
                for (NodeProcess n : List.of(a, b)) {
                    String learned = ask(n, "LEARNED").get("learned");
                    TRAVELLED.add(run.id + ": " + learned);
                    run.soft.assertThat(learned).as("%s: the allowedClasses line learned from what it sent", run.id)
                            .isEqualTo(LEARNED);
                }
                Matcher mt = REJECTED_CLASS.matcher(Files.readString(log));
                while (mt.find()) {
                    REJECTED.add(mt.group(1));
                }
                run.soft.assertAll();
            }
        }
    }

    /** The state of one (transport, profile) pair and its soft assertions. */
    private static final class Run {
        final String id;
        final String transport;
        final String profile;
        final boolean presets;
        final NodeProcess a;
        final NodeProcess b;
        final Path log;
        final SoftAssertions soft = new SoftAssertions();
        /** Thread dumps taken (once per run: the first unsettled wait says the most). */
        int dumped;

        Run(String transport, String profile, NodeProcess a, NodeProcess b, Path log) {
            this.id = transport + "/" + profile;
            this.transport = transport;
            this.profile = profile;
            this.presets = "presets".equals(profile);
            this.a = a;
            this.b = b;
            this.log = log;
        }

        /** Scenario 1: B caches the entity, A renames it, B must read the new name; then B renames it. */
        void entity(String kind, String region, boolean copy) throws Exception {
            String scenario = "1 entity " + region + (copy ? " (copy)" : " (invalidation)");
            Map<String, String> first = ask(b, "READ " + kind + " 1");
            String old = first.get("name");
            soft.assertThat(old).as("%s %s: B's first read", id, scenario).isEqualTo(kind + "-1");
            Map<String, String> w = ask(a, "RENAME " + kind + " 1 " + kind + "-1-A");
            soft.assertThat(w.get("error")).as("%s %s: A's update", id, scenario).isNull();
            Fresh f = awaitFresh(scenario, List.of(region), "READ " + kind + " 1",
                    r -> (kind + "-1-A").equals(r.get("name")));
            String notes = "";
            if (presets && copy) {
                soft.assertThat(f.firstAfter.get("hits")).as("%s %s: B's read is a second-level-cache hit", id,
                        scenario).isNotEqualTo("0");
                soft.assertThat(f.firstAfter.get("sql")).as("%s %s: B's read needs no SQL", id, scenario)
                        .isEqualTo("0");
            }
            Map<String, String> bw = ask(b, "RENAME " + kind + " 1 " + kind + "-1-B");
            soft.assertThat(bw.get("error")).as("%s %s: B's update of the entity A changed (optimistic lock)", id,
                    scenario).isNull();
            if (bw.get("error") != null) {
                notes = "B's update: " + bw.get("error");
            }
            row(scenario, f, "hits=" + f.firstAfter.get("hits") + " sql=" + f.firstAfter.get("sql"), List.of(region),
                    notes);
        }

        /** Scenario 2: B caches the collection, A adds a tag, B must see it. */
        void collection(String kind, String region) throws Exception {
            String scenario = "2 collection " + region + ".tags";
            Map<String, String> first = ask(b, "TAGS " + kind + " 2");
            soft.assertThat(first.get("tags")).as("%s %s: B's first read", id, scenario).isEqualTo("t0");
            Map<String, String> w = ask(a, "ADD_TAG " + kind + " 2 tA");
            soft.assertThat(w.get("error")).as("%s %s: A's update", id, scenario).isNull();
            Fresh f = awaitFresh(scenario, List.of(region, region + ".tags"), "TAGS " + kind + " 2",
                    r -> "t0,tA".equals(r.get("tags")));
            row(scenario, f, "hits=" + f.firstAfter.get("hits") + " sql=" + f.firstAfter.get("sql"),
                    List.of(region, region + ".tags"), "");
        }

        /** Scenario 3: B caches the query's result, A renames a matching row, B's result must reflect it. */
        void query() throws Exception {
            String scenario = "3 query";
            Map<String, String> first = ask(b, "QUERY q-");
            soft.assertThat(first.get("names")).as("%s %s: B's first result", id, scenario).isEqualTo("q-10,q-11");
            ask(a, "QUERY q-");
            Map<String, String> w = ask(a, "RENAME item 10 q-10-A");
            soft.assertThat(w.get("error")).as("%s %s: A's update", id, scenario).isNull();
            // A runs the query again: its fresh result is cached (and replicated)
            ask(a, "QUERY q-");
            List<String> regions = List.of("items", "default-query-results-region", "default-update-timestamps-region");
            Fresh f = awaitFresh(scenario, regions, "QUERY q-", r -> "q-10-A,q-11".equals(r.get("names")));
            row(scenario, f, "queryHits=" + f.firstAfter.get("qhits") + " sql=" + f.firstAfter.get("sql"), regions, "");
        }

        /** Scenario 4: Spring's caches: evictions, then puts, in A; B never returns what A evicted or replaced. */
        void spring() throws Exception {
            List<String> caches = List.of("greetings", "pairs");
            for (NodeProcess n : List.of(a, b)) {
                soft.assertThat(ask(n, "GREETING x").get("text")).as("%s greeting(x)", id).isEqualTo("hello-x");
                soft.assertThat(ask(n, "PAIR a b").get("text")).as("%s pair(a,b)", id).isEqualTo("hello-a-b");
            }
            // every put of these reads has reached the other node: nothing removes B's entry in between
            settle(a, b, caches);
            settle(b, a, caches);
            String before = ask(b, "GREETING x").get("runs");
            soft.assertThat(ask(b, "GREETING x").get("runs")).as("%s: B's greeting(x) is cached", id)
                    .isEqualTo(before);
            ask(a, "SPRING_CHANGE x a b v1");
            Fresh g = awaitFresh("4 spring @CacheEvict greetings", caches, "GREETING x",
                    r -> "v1".equals(r.get("text")));
            Fresh p = awaitFresh("4 spring @CacheEvict pairs", caches, "PAIR a b",
                    r -> "v1".equals(r.get("text")));
            row("4 spring @CacheEvict greetings", g, "-", List.of("greetings"), "");
            row("4 spring @CacheEvict pairs (SimpleKey)", p, "-", List.of("pairs"), "");
            int runsG = Integer.parseInt(ask(b, "GREETING x").get("runs"));
            int runsP = Integer.parseInt(ask(b, "PAIR a b").get("runs"));
            ask(a, "SPRING_PUT x a b v2");
            Fresh pg = awaitFresh("4 spring @CachePut greetings", caches, "GREETING x",
                    r -> "v2".equals(r.get("text")));
            Fresh pp = awaitFresh("4 spring @CachePut pairs", caches, "PAIR a b",
                    r -> "v2".equals(r.get("text")));
            int bodyG = Integer.parseInt(pg.firstAfter.getOrDefault("runs", "-1")) - runsG;
            int bodyP = Integer.parseInt(pp.firstAfter.getOrDefault("runs", "-1")) - runsP;
            if (presets) {
                soft.assertThat(bodyG).as("%s: B returns A's @CachePut greeting without running the method", id)
                        .isZero();
                soft.assertThat(bodyP).as("%s: B returns A's @CachePut pair without running the method", id)
                        .isZero();
            }
            row("4 spring @CachePut greetings", pg, springHit(pg, bodyG), List.of("greetings"), "");
            row("4 spring @CachePut pairs (SimpleKey)", pp, springHit(pp, bodyP), List.of("pairs"), "");
        }

        private static String springHit(Fresh f, int bodyRuns) {
            if (bodyRuns != 0) {
                return "miss (body ran)";
            }
            return f.fresh && f.stale == 0 ? "hit (body not run)" : "stale hit (body not run)";
        }

        /**
         * Waits until B received every event A queued for {@code caches} (at most 15 s), then reads in B
         * until the value is new (at most 15 s more): each read before that is stale, since every event had arrived
         * (counted; after 3 the answer is clear). Asserts no stale read and the new value within the bound.
         */
        Fresh awaitFresh(String scenario, List<String> caches, String read, Predicate<Map<String, String>> isNew)
                throws Exception {
            Fresh f = new Fresh();
            f.settled = settle(a, b, caches);
            long end = System.nanoTime() + WAIT_NANOS;
            while (true) {
                Map<String, String> r = ask(b, read);
                if (f.firstAfter == null) {
                    f.firstAfter = r;
                }
                f.last = r;
                if (isNew.test(r)) {
                    f.fresh = true;
                    break;
                }
                f.stale++;
                if (f.stale >= 3 || System.nanoTime() > end) {
                    break;
                }
                Thread.sleep(200);
            }
            String why = f.stale == 0 ? "" : ehrelayLog(log) + "\nA: " + ask(a, "METRICS " + String.join(" ", caches))
                    + "\nB: " + ask(b, "METRICS " + String.join(" ", caches))
                    + (f.settled || dumped++ > 0 ? "" : "\n" + a.busyThreads() + b.busyThreads());
            soft.assertThat(f.stale).as("%s %s: stale reads in B after replication settled (settled: %s; last "
                    + "read %s); ehrelay's log lines and counters:%n%s", id, scenario, f.settled, f.last, why).isZero();
            soft.assertThat(f.fresh).as("%s %s: B reads the new value within 15 s (last read %s)", id, scenario,
                    f.last).isTrue();
            return f;
        }

        /**
         * Waits (at most 15 s) until {@code to} received every event {@code from} queued for {@code caches}, by
         * their ehrelay MBeans ({@code enqueued} in one, {@code received} — applied or invalidated — in the other).
         */
        boolean settle(NodeProcess from, NodeProcess to, List<String> caches) throws Exception {
            long end = System.nanoTime() + WAIT_NANOS;
            while (System.nanoTime() < end) {
                Map<String, String> mf = ask(from, "METRICS " + String.join(" ", caches));
                Map<String, String> mt = ask(to, "METRICS " + String.join(" ", caches));
                long queued = 0;
                long arrived = 0;
                for (String c : caches) {
                    queued += count(mf, c + ".enqueued");
                    arrived += count(mt, c + ".received");
                }
                if (arrived >= queued) {
                    return true;
                }
                Thread.sleep(50);
            }
            return false;
        }

        void row(String scenario, Fresh f, String hits, List<String> caches, String notes) throws Exception {
            Map<String, String> m = ask(b, "METRICS " + String.join(" ", caches));
            long rejected = 0;
            String invalidated = "absent";
            for (String c : caches) {
                rejected += count(m, c + ".rejected");
                String inv = m.get(c + ".invalidated");
                if (inv != null && !"absent".equals(inv)) {
                    invalidated = "absent".equals(invalidated) ? inv
                            : Long.toString(Long.parseLong(invalidated) + Long.parseLong(inv));
                }
            }
            String n = (f.settled ? "" : "not settled in 15 s; ") + notes;
            synchronized (ROWS) {
                ROWS.add("| " + transport + " | " + profile + " | " + scenario + " | " + f.stale + " | "
                        + (f.fresh ? "yes" : "NO") + " | " + hits + " | " + rejected + " | " + invalidated + " | "
                        + n + " |");
            }
        }
    }

    private static final class Fresh {
        boolean settled;
        boolean fresh;
        int stale;
        Map<String, String> firstAfter;
        Map<String, String> last;
    }

    /**
     * The nodes' ehrelay lines for a failure's message: each distinct line once (the writer's ERROR per class is
     * repeated by every node and cache), at most 40, then both nodes' counters of the caches involved, so that a
     * failure seen once says whether A sent, failed or B received.
     */
    private static String ehrelayLog(Path log) throws Exception {
        try (Stream<String> lines = Files.lines(log)) {
            return String.join("\n", lines.filter(l -> l.contains("ehrelay:") || l.contains("Exception in thread")
                    || l.contains("Error:"))
                    .map(l -> l.replaceAll("-\\d+] ", "-n] ")).distinct().limit(40).toList());
        }
    }

    private static long count(Map<String, String> m, String key) {
        String v = m.get(key);
        return v == null || "absent".equals(v) ? 0 : Long.parseLong(v);
    }

    private static long deadline(int seconds) {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    }

    /** Sends a command, returns the answer's {@code key=value} fields. */
    static Map<String, String> ask(NodeProcess n, String command) throws Exception {
        n.send(command);
        String line = n.expect("OK", deadline(60), l -> { });
        Map<String, String> m = new LinkedHashMap<>();
        for (String f : line.substring(2).trim().split(" ")) {
            int eq = f.indexOf('=');
            if (eq > 0) {
                m.put(f.substring(0, eq), f.substring(eq + 1));
            }
        }
        return m;
    }

    /** The schema and rows both nodes start from (Hibernate itself creates nothing). */
    private static void schema(Connection c) throws Exception {
        try (Statement s = c.createStatement()) {
            for (String t : List.of("item", "note")) {
                s.execute("CREATE TABLE " + t
                        + " (id BIGINT PRIMARY KEY, name VARCHAR(255), row_version INT NOT NULL)");
                s.execute("CREATE TABLE " + t + "_tags (" + t + "_id BIGINT NOT NULL, tag VARCHAR(255) NOT NULL, "
                        + "PRIMARY KEY (" + t + "_id, tag))");
                s.execute("INSERT INTO " + t + " VALUES (1, '" + t + "-1', 0), (2, '" + t + "-2', 0)");
                s.execute("INSERT INTO " + t + "_tags VALUES (2, 't0')");
            }
            s.execute("INSERT INTO item VALUES (10, 'q-10', 0), (11, 'q-11', 0)");
            s.execute("CREATE TABLE greeting (gkey VARCHAR(255) PRIMARY KEY, gtext VARCHAR(255))");
            s.execute("INSERT INTO greeting VALUES ('g:x', 'hello-x'), ('p:a:b', 'hello-a-b')");
        }
    }

    /**
     * Node {@code index}'s {@code ehcache.xml}: the transport's provider (manual peers on 127.0.0.1; JGroups: its
     * TCP stack with TCPPING on 127.0.0.1), its listener on 127.0.0.1, and the applications' regions, each with the
     * transport's replicator: copy regions with the defaults, {@code notes} and {@code notes.tags} by invalidation.
     */
    static String ehcacheXml(String transport, String name, int index, int[] ports, boolean presets) {
        String prefix = Profiles.factoryPrefix(transport);
        int own = ports[index];
        int other = ports[1 - index];
        String provider;
        if (Profiles.isJGroups(transport)) {
            provider = Profiles.jgroupsProperties(transport, own, ports[0], ports[1]);
        } else {
            provider = "peerDiscovery=manual, " + Profiles.manualPeers(transport, "127.0.0.1:" + other, ALL_CACHES);
        }
        provider += ", learnAllowedClasses=true";
        if (presets) {
            provider += ", allowedClasses=" + PRESETS;
        }
        StringBuilder caches = new StringBuilder();
        for (String cache : ALL_CACHES) {
            String props = INVALIDATION.contains(cache)
                    ? "replicateAsynchronously=true, replicatePutsViaCopy=false, replicateUpdatesViaCopy=false"
                    : "replicateAsynchronously=true";
            caches.append("  <cache name=\"").append(cache)
                    .append("\" maxEntriesLocalHeap=\"10000\" eternal=\"true\">\n")
                    .append("    <cacheEventListenerFactory class=\"").append(prefix)
                    .append("CacheReplicatorFactory\"\n")
                    .append("        properties=\"").append(props).append("\"/>\n")
                    .append("  </cache>\n");
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + name + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"" + prefix + "CacheManagerPeerProviderFactory\"\n"
                + "      properties=\"" + provider + "\"/>\n"
                + (Profiles.isJGroups(transport) ? ""
                : "  <cacheManagerPeerListenerFactory class=\"" + prefix + "CacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=127.0.0.1, port=" + own + "\"/>\n")
                + caches
                + "</ehcache>\n";
    }
}
