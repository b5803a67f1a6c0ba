package io.ehrelay.rmi;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.rmi.server.RMISocketFactory;

import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.MulticastKeepaliveHeartbeatSender;

/**
 * A stock Ehcache 2.10 node in its own JVM, driven over stdin: {@code put c k v}, {@code get c k},
 * {@code remove c k}, {@code removeAll c}, {@code size c}, {@code exit}. Each command answers one line
 * starting with {@code OK}, or {@code ERR}. Its RMI sockets are bound to 127.0.0.1 (the stock listener would
 * otherwise listen on every interface): the test's edge, not part of Ehcache.
 */
public final class StockNode {

    private StockNode() {
    }

    public static void main(String[] args) throws Exception {
        RMISocketFactory.setSocketFactory(new LoopbackSockets());
        // stock's heartbeat interval is a static; 1 s (its minimum) keeps the discovery test short
        MulticastKeepaliveHeartbeatSender.setHeartBeatInterval(1000);
        CacheManager cm = CacheManager.newInstance(args[0]);
        System.out.println("READY");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] p = line.split(" ", 4);
            try {
                if (p[0].equals("exit")) {
                    break;
                }
                Ehcache c = cm.getEhcache(p[1]);
                switch (p[0]) {
                    case "put":
                        c.put(new Element(p[2], p[3]));
                        System.out.println("OK");
                        break;
                    case "get":
                        Element e = c.get(p[2]);
                        System.out.println("OK " + (e == null ? "<null>" : e.getObjectValue()));
                        break;
                    case "remove":
                        c.remove(p[2]);
                        System.out.println("OK");
                        break;
                    case "removeAll":
                        c.removeAll();
                        System.out.println("OK");
                        break;
                    case "size":
                        System.out.println("OK " + c.getSize());
                        break;
                    default:
                        System.out.println("ERR unknown command " + p[0]);
                }
            } catch (RuntimeException ex) {
                System.out.println("ERR " + ex);
            }
        }
        cm.shutdown();
    }

    /** RMI sockets on loopback only. */
    static final class LoopbackSockets extends RMISocketFactory {
        @Override
        public Socket createSocket(String host, int port) throws IOException {
            Socket s = new Socket();
            s.connect(new InetSocketAddress(host, port), 5000);
            return s;
        }

        @Override
        public ServerSocket createServerSocket(int port) throws IOException {
            return new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        }
    }
}
