package io.ehrelay.frameworks;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.cache.annotation.CacheEvict;
import org.springframework.cache.annotation.CachePut;
import org.springframework.cache.annotation.Cacheable;

/**
 * The Spring side of the test application: cached reads of table {@code greeting} in the shared database (one
 * argument: the key is the argument itself; two: a {@code SimpleKey}), evictions and puts, and how often each method
 * body ran in this node.
 */
public class GreetingService {

    private final String jdbcUrl;
    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    public GreetingService(String jdbcUrl) {
        this.jdbcUrl = jdbcUrl;
    }

    @Cacheable("greetings")
    public Greeting greeting(String name) {
        ran("greeting");
        return load("g:" + name);
    }

    @Cacheable("pairs")
    public Greeting pair(String a, String b) {
        ran("pair");
        return load("p:" + a + ":" + b);
    }

    @CacheEvict("greetings")
    public void evictGreeting(String name) {
        ran("evictGreeting");
    }

    @CacheEvict("pairs")
    public void evictPair(String a, String b) {
        ran("evictPair");
    }

    /** Stores the new text and puts it into the cache under the same key {@link #greeting} uses. */
    @CachePut(cacheNames = "greetings", key = "#p0")
    public Greeting putGreeting(String name, String text) {
        ran("putGreeting");
        store("g:" + name, text);
        return new Greeting("g:" + name, text);
    }

    /** Stores the new text and puts it under {@link #pair}'s key. */
    @CachePut(cacheNames = "pairs", key = "new org.springframework.cache.interceptor.SimpleKey(#p0, #p1)")
    public Greeting putPair(String a, String b, String text) {
        ran("putPair");
        store("p:" + a + ":" + b, text);
        return new Greeting("p:" + a + ":" + b, text);
    }

    /** Not cached: how the application changes a row behind the cache. */
    public void store(String key, String text) {
        try (Connection c = DriverManager.getConnection(jdbcUrl, "sa", "");
             PreparedStatement ps = c.prepareStatement("MERGE INTO greeting (gkey, gtext) KEY (gkey) VALUES (?, ?)")) {
            ps.setString(1, key);
            ps.setString(2, text);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public int runs(String method) {
        AtomicInteger n = runs.get(method);
        return n == null ? 0 : n.get();
    }

    private void ran(String method) {
        runs.computeIfAbsent(method, m -> new AtomicInteger()).incrementAndGet();
    }

    private Greeting load(String key) {
        try (Connection c = DriverManager.getConnection(jdbcUrl, "sa", "");
             PreparedStatement ps = c.prepareStatement("SELECT gtext FROM greeting WHERE gkey = ?")) {
            ps.setString(1, key);
            try (ResultSet rs = ps.executeQuery()) {
                return new Greeting(key, rs.next() ? rs.getString(1) : null);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }
}
