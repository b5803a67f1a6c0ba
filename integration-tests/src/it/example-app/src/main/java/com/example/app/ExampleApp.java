package com.example.app;

import java.io.BufferedReader;
import java.io.InputStreamReader;
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

    /** The peers this node reaches now for {@code users}: what a health check would ask. */
    public int peers() {
        return cacheManager.getCacheManagerPeerProvider("ehrelay-tcp").listRemoteCachePeers(users()).size();
    }

    /**
     * Runs one node and reads commands from standard input: {@code put <key> <value>}, {@code get <key>},
     * {@code peers}, {@code quit} (docs/tutorial.md).
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: ExampleApp <name> <host> <port> <peer host:port>");
            System.exit(2);
        }
        try (ExampleApp app = new ExampleApp(args[0], args[1], Integer.parseInt(args[2]), args[3])) {
            System.out.println("node " + args[0] + " replicating 'users' with " + args[3]
                    + "; commands: put <key> <value> | get <key> | peers | quit");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                String[] w = line.trim().split("\\s+", 3);
                if (w[0].equals("put") && w.length == 3) {
                    app.put(w[1], w[2]);
                    System.out.println("ok");
                } else if (w[0].equals("get") && w.length == 2) {
                    System.out.println(w[1] + " = " + app.get(w[1]));
                } else if (w[0].equals("peers")) {
                    System.out.println(app.peers() + " peer(s)");
                } else if (w[0].equals("quit")) {
                    break;
                } else if (!w[0].isEmpty()) {
                    System.out.println("commands: put <key> <value> | get <key> | peers | quit");
                }
            }
        }
    }
}
