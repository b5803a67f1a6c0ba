package io.ehrelay.frameworks;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.replay.FaultNode;
import net.sf.ehcache.CacheManager;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.cfg.Configuration;
import org.hibernate.stat.CacheRegionStatistics;
import org.hibernate.stat.Statistics;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * A node of {@code io.ehrelay.replay.FrameworksTest}, as its own JVM: one Ehcache CacheManager (the singleton, from
 * the {@code ehcache.xml} at {@code xml=}) used by a Hibernate 5.6 SessionFactory (hibernate-ehcache's
 * {@code SingletonEhcacheRegionFactory}) and a Spring 5.3 context ({@code EhCacheCacheManager}), both on the shared
 * H2 database at {@code jdbc=}. Says {@code READY}, then answers one line per command on stdin, {@code OK k=v …}
 * (an application exception is an answer too: {@code OK error=…}):
 * <ul>
 * <li>{@code AWAIT_PEERS n}</li>
 * <li>{@code READ item|note id} → {@code name version hits sql} (hits: second-level-cache hits of the entity's
 * region during the read; sql: statements prepared)</li>
 * <li>{@code RENAME item|note id name} → {@code version} or {@code error}</li>
 * <li>{@code TAGS item|note id} → {@code tags hits sql}; {@code ADD_TAG item|note id tag}</li>
 * <li>{@code QUERY prefix} → {@code names qhits sql}: the cacheable HQL query of names starting with prefix</li>
 * <li>{@code GREETING name}, {@code PAIR a b} → {@code text runs}; {@code SPRING_CHANGE name a b text} (both rows
 * changed, both keys evicted); {@code SPRING_PUT name a b text} (both {@code @CachePut} methods)</li>
 * <li>{@code METRICS cache…} → {@code cache.metric=count|absent} from this JVM's ehrelay MBeans</li>
 * <li>{@code LEARNED} → {@code learned=} the {@code allowedClasses} line ehrelay learned from what this node sent
 * (JMX gauge {@code learnedAllowedClasses})</li>
 * <li>{@code EXIT}</li>
 * </ul>
 */
public final class FrameworkNode {

    static final List<String> METRICS = List.of("received", "applied", "rejected", "invalidated", "enqueued", "sent", "failed",
            "dropped", "gaps", "resyncs");

    private final SessionFactory sessions;
    private final GreetingService spring;
    private final CacheManager cacheManager;

    private FrameworkNode(CacheManager cacheManager, SessionFactory sessions, GreetingService spring) {
        this.cacheManager = cacheManager;
        this.sessions = sessions;
        this.spring = spring;
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String s : argv) {
            int eq = s.indexOf('=');
            a.put(s.substring(0, eq), s.substring(eq + 1));
        }
        System.setProperty("org.jboss.logging.provider", "slf4j");
        FrameworkNode node;
        try {
            CacheManager cm;
            try (InputStream in = Files.newInputStream(Path.of(a.get("xml")))) {
                cm = CacheManager.create(in);
            }
            SessionFactory sf = new Configuration()
                    .addAnnotatedClass(Item.class)
                    .addAnnotatedClass(Note.class)
                    .setProperty("hibernate.connection.driver_class", "org.h2.Driver")
                    .setProperty("hibernate.connection.url", a.get("jdbc"))
                    .setProperty("hibernate.connection.username", "sa")
                    .setProperty("hibernate.connection.password", "")
                    .setProperty("hibernate.connection.pool_size", "3")
                    .setProperty("hibernate.dialect", "org.hibernate.dialect.H2Dialect")
                    .setProperty("hibernate.hbm2ddl.auto", "none") // the test creates the schema
                    .setProperty("hibernate.cache.use_second_level_cache", "true")
                    .setProperty("hibernate.cache.use_query_cache", "true")
                    .setProperty("hibernate.cache.region.factory_class",
                            "org.hibernate.cache.ehcache.internal.SingletonEhcacheRegionFactory")
                    // every region must be one of ehcache.xml's replicated caches
                    .setProperty("hibernate.cache.ehcache.missing_cache_strategy", "fail")
                    .setProperty("hibernate.generate_statistics", "true")
                    .buildSessionFactory();
            SpringConfig.jdbcUrl = a.get("jdbc");
            AnnotationConfigApplicationContext ctx = new AnnotationConfigApplicationContext(SpringConfig.class);
            node = new FrameworkNode(cm, sf, ctx.getBean(GreetingService.class));
        } catch (Exception | Error e) {
            e.printStackTrace();
            say("ERROR " + e.toString().replace('\n', ' '));
            System.exit(1);
            return;
        }
        say("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] c = line.trim().split(" ");
            if (c[0].equals("EXIT")) {
                break;
            }
            try {
                say("OK " + node.answer(c));
            } catch (RuntimeException e) {
                System.err.println("[" + a.get("label") + "] " + line + ": ");
                e.printStackTrace();
                say("OK error=" + chain(e));
            }
        }
        node.sessions.close();
        node.cacheManager.shutdown();
        System.exit(0);
    }

    private String answer(String[] c) throws Exception {
        switch (c[0]) {
            case "AWAIT_PEERS":
                return "peers=" + FaultNode.awaitReachablePeers(ReplicationNode.all(cacheManager).get(0),
                        Integer.parseInt(c[1]));
            case "READ": {
                Class<? extends Tagged> type = type(c[1]);
                return measured(region(c[1]), s -> {
                    Tagged t = s.get(type, Long.valueOf(c[2]));
                    return "name=" + t.getName() + " version=" + t.getVersion();
                });
            }
            case "RENAME": {
                Class<? extends Tagged> type = type(c[1]);
                return measured(region(c[1]), s -> {
                    Tagged t = s.get(type, Long.valueOf(c[2]));
                    t.setName(c[3]);
                    return "old=" + t.getVersion();
                });
            }
            case "TAGS": {
                Class<? extends Tagged> type = type(c[1]);
                return measured(region(c[1]) + ".tags", s -> "tags=" + String.join(",",
                        new TreeSet<>(s.get(type, Long.valueOf(c[2])).getTags())));
            }
            case "ADD_TAG": {
                Class<? extends Tagged> type = type(c[1]);
                return measured(region(c[1]) + ".tags", s -> {
                    s.get(type, Long.valueOf(c[2])).getTags().add(c[3]);
                    return "added=" + c[3];
                });
            }
            case "QUERY": {
                Statistics st = sessions.getStatistics();
                long q0 = st.getQueryCacheHitCount();
                long sql0 = st.getPrepareStatementCount();
                List<String> names = new ArrayList<>();
                try (Session s = sessions.openSession()) {
                    s.beginTransaction();
                    names.addAll(s.createQuery("select i.name from Item i where i.name like :p order by i.id",
                            String.class).setParameter("p", c[1] + "%").setCacheable(true).list());
                    s.getTransaction().commit();
                }
                return "names=" + String.join(",", names) + " qhits=" + (st.getQueryCacheHitCount() - q0) + " sql="
                        + (st.getPrepareStatementCount() - sql0);
            }
            case "GREETING":
                return "text=" + spring.greeting(c[1]).text() + " runs=" + spring.runs("greeting");
            case "PAIR":
                return "text=" + spring.pair(c[1], c[2]).text() + " runs=" + spring.runs("pair");
            case "SPRING_CHANGE":
                spring.store("g:" + c[1], c[4]);
                spring.evictGreeting(c[1]);
                spring.store("p:" + c[2] + ":" + c[3], c[4]);
                spring.evictPair(c[2], c[3]);
                return "changed=" + c[4];
            case "SPRING_PUT":
                spring.putGreeting(c[1], c[4]);
                spring.putPair(c[2], c[3], c[4]);
                return "put=" + c[4];
            case "METRICS":
                return metrics(c);
            case "LEARNED":
                return "learned=" + learned();
            default:
                throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    /** Runs {@code work} in a transaction; adds the region's second-level-cache hits and the statements it took. */
    private String measured(String region, Function<Session, String> work) {
        Statistics st = sessions.getStatistics();
        CacheRegionStatistics rs = st.getDomainDataRegionStatistics(region);
        long h0 = rs.getHitCount();
        long sql0 = st.getPrepareStatementCount();
        String out;
        try (Session s = sessions.openSession()) {
            s.beginTransaction();
            try {
                out = work.apply(s);
                s.getTransaction().commit();
            } catch (RuntimeException e) {
                if (s.getTransaction().isActive()) {
                    s.getTransaction().rollback();
                }
                throw e;
            }
        }
        return out + " hits=" + (rs.getHitCount() - h0) + " sql=" + (st.getPrepareStatementCount() - sql0);
    }

    private static Class<? extends Tagged> type(String kind) {
        return "item".equals(kind) ? Item.class : Note.class;
    }

    private static String region(String kind) {
        return "item".equals(kind) ? "items" : "notes";
    }

    /** The {@code allowedClasses} line ehrelay learned from what this node sent ({@code learnAllowedClasses=true}). */
    private static String learned() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        Set<ObjectName> names = server.queryNames(
                new ObjectName("io.ehrelay:type=CacheManager,name=learnedAllowedClasses,*"), null);
        return names.isEmpty() ? "absent" : String.valueOf(server.getAttribute(names.iterator().next(), "Value"));
    }

    /** Reads this JVM's ehrelay per-cache MBeans, as an operator's JMX client would. */
    private static String metrics(String[] c) throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        StringBuilder sb = new StringBuilder();
        for (int i = 1; i < c.length; i++) {
            for (String metric : METRICS) {
                Set<ObjectName> names = server.queryNames(new ObjectName("io.ehrelay:type=Cache,cache=" + c[i]
                        + ",name=" + metric + ",*"), null);
                String v = "absent";
                if (!names.isEmpty()) {
                    v = String.valueOf(server.getAttribute(names.iterator().next(), "Count"));
                }
                sb.append(sb.length() == 0 ? "" : " ").append(c[i]).append('.').append(metric).append('=').append(v);
            }
        }
        return sb.toString();
    }

    private static String chain(Throwable e) {
        StringBuilder sb = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            sb.append(sb.length() == 0 ? "" : "<").append(t.getClass().getName());
        }
        return sb.toString();
    }

    static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
