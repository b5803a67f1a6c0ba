package io.ehrelay.it11;

import java.io.ByteArrayInputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CacheManagerPeerProvider;

/**
 * The program of the Java 11 container suite: an application on Java 11 that uses the published jars as a user
 * does — a CacheManager from an {@code ehcache.xml} replicating two caches ({@code replay}, and
 * {@code bootstrapped}, which loads from a peer at start) over the chosen transport with manual discovery —
 * driven by the test over remote JMX ({@link Java11NodeMBean}). Compiled for Java 11, apart from the suites that
 * drive it. Arguments {@code key=value}: {@code transport} (tcp, rmi, hessian, jgroups), {@code name},
 * {@code port}, {@code peers} (the other nodes' host names, {@code |}-separated, all on {@code port}). Prints
 * {@code NODE READY} once started; shuts the CacheManager down on SIGTERM.
 */
public final class Java11Node implements Java11NodeMBean {

    private final CacheManager cacheManager;

    private Java11Node(CacheManager cacheManager) {
        this.cacheManager = cacheManager;
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (String s : argv) {
            int eq = s.indexOf('=');
            a.put(s.substring(0, eq), s.substring(eq + 1));
        }
        String host = InetAddress.getLocalHost().getHostAddress();
        String name = a.getOrDefault("name", InetAddress.getLocalHost().getHostName());
        String port = a.getOrDefault("port", "40001");
        String[] peers = a.getOrDefault("peers", "").isEmpty() ? new String[0] : a.get("peers").split("\\|");
        String xml = xml(a.getOrDefault("transport", "tcp"), name, host, port, peers);
        CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        ManagementFactory.getPlatformMBeanServer().registerMBean(
                new StandardMBean(new Java11Node(cm), Java11NodeMBean.class), new ObjectName("io.ehrelay.it11:type=Node"));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            cm.shutdown();
            stopped.countDown();
        }));
        System.out.println("NODE READY " + name + " java " + System.getProperty("java.version"));
        System.out.flush();
        stopped.await();
    }

    /** The node's {@code ehcache.xml}: what a user writes for the transport, with the peers' host names. */
    static String xml(String transport, String name, String host, String port, String[] peers) {
        String prefix;
        String discovery;
        boolean jgroups = false;
        switch (transport) {
            case "tcp":
                prefix = "io.ehrelay.tcp.Tcp";
                discovery = "peerDiscovery=manual, peers=" + join(peers, port, "", "");
                break;
            case "hessian":
                prefix = "io.ehrelay.hessian.Hessian";
                discovery = "peerDiscovery=manual, peers=" + join(peers, port, "http://", "/ehrelay");
                break;
            case "rmi": {
                prefix = "io.ehrelay.rmi.Rmi";
                StringBuilder urls = new StringBuilder();
                for (String peer : peers) {
                    for (String cache : new String[] {"replay", "bootstrapped"}) {
                        urls.append(urls.length() == 0 ? "" : "|").append("//").append(peer).append(':').append(port)
                                .append('/').append(cache);
                    }
                }
                discovery = "peerDiscovery=manual, rmiUrls=" + urls;
                break;
            }
            case "jgroups": {
                prefix = "io.ehrelay.jgroups.JGroups";
                jgroups = true;
                StringBuilder hosts = new StringBuilder(host + "[" + port + "]");
                for (String peer : peers) {
                    hosts.append('|').append(peer).append('[').append(port).append(']');
                }
                discovery = "channelName=java11, bindAddress=" + host + ", file=ehrelay-jgroups-tcp.xml, bindPort="
                        + port + ", initialHosts=" + hosts;
                break;
            }
            default:
                throw new IllegalArgumentException("unknown transport " + transport);
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + name + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"" + prefix + "CacheManagerPeerProviderFactory\"\n"
                // separate hosts on the suite's own internal network, no secret: admitted by name
                + "      properties=\"" + discovery + ", unauthenticatedPeers=any\"/>\n"
                + (jgroups ? "" : "  <cacheManagerPeerListenerFactory class=\"" + prefix
                + "CacheManagerPeerListenerFactory\"\n      properties=\"hostName=" + host + ", port=" + port + "\"/>\n")
                + "  <cache name=\"replay\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\"\n"
                + "        properties=\"replicateAsynchronously=false\"/>\n"
                + "  </cache>\n"
                + "  <cache name=\"bootstrapped\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\"/>\n"
                + "    <bootstrapCacheLoaderFactory class=\"" + prefix + "BootstrapCacheLoaderFactory\"\n"
                + "        properties=\"bootstrapAsynchronously=false\"/>\n"
                + "  </cache>\n"
                + "</ehcache>\n";
    }

    private static String join(String[] peers, String port, String before, String after) {
        StringBuilder out = new StringBuilder();
        for (String peer : peers) {
            out.append(out.length() == 0 ? "" : "|").append(before).append(peer).append(':').append(port)
                    .append(after);
        }
        return out.toString();
    }

    @Override
    public String getJavaVersion() {
        return System.getProperty("java.version");
    }

    @Override
    public void put(String cache, String key, String value) {
        cacheManager.getEhcache(cache).put(new Element(key, value));
    }

    @Override
    public void putUnlisted(String cache, String key) {
        cacheManager.getEhcache(cache).put(new Element(key, new Unlisted(key)));
    }

    @Override
    public String get(String cache, String key) {
        Element e = cacheManager.getEhcache(cache).get(key);
        return e == null ? null : String.valueOf(e.getObjectValue());
    }

    @Override
    public void remove(String cache, String key) {
        cacheManager.getEhcache(cache).remove(key);
    }

    @Override
    public int size(String cache) {
        return cacheManager.getEhcache(cache).getSize();
    }

    @Override
    public int peers(String cache) {
        int n = 0;
        for (CacheManagerPeerProvider p
                : cacheManager.getCacheManagerPeerProviders().values()) {
            n += p.listRemoteCachePeers(cacheManager.getEhcache(cache)).size();
        }
        return n;
    }
}
