package com.example.app;

import java.net.URL;

import net.sf.ehcache.Cache;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;

/** A node of the example: the application's CacheManager from its ehcache.xml, replicating over ehrelay's TCP. */
public final class ExampleApp implements AutoCloseable {

    private final CacheManager cacheManager;

    /** Starts node {@code name} listening on {@code host:port}, replicating with {@code peer} ({@code host:port}). */
    public ExampleApp(String name, String host, int port, String peer) {
        System.setProperty("example.node", name);
        System.setProperty("example.host", host);
        System.setProperty("example.port", Integer.toString(port));
        System.setProperty("example.peer", peer);
        URL xml = ExampleApp.class.getResource("/ehcache.xml");
        cacheManager = new CacheManager(xml);
    }

    public void put(String key, String value) {
        users().put(new Element(key, value));
    }

    public String get(String key) {
        Element e = users().get(key);
        return e == null ? null : (String) e.getObjectValue();
    }

    private Cache users() {
        return cacheManager.getCache("users");
    }

    @Override
    public void close() {
        cacheManager.shutdown();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: ExampleApp <name> <host> <port> <peer host:port>");
            System.exit(2);
        }
        try (ExampleApp app = new ExampleApp(args[0], args[1], Integer.parseInt(args[2]), args[3])) {
            System.out.println("node " + args[0] + " replicating 'users' with " + args[3] + "; Ctrl-C stops it");
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
