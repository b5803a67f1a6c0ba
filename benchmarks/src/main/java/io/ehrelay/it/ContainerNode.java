package io.ehrelay.it;

import java.io.ByteArrayInputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import javax.management.ObjectName;
import javax.management.StandardMBean;

import io.ehrelay.replay.Clock;
import io.ehrelay.replay.Profiles;
import io.ehrelay.replay.ReplayNode;
import io.ehrelay.replay.Values;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.event.CacheEventListenerAdapter;

/**
 * The program in each node container: a CacheManager replicating over the chosen transport, driven and
 * observed by the test through remote JMX ({@link NodeControlMBean} plus ehrelay's own metrics). Arguments are
 * {@code key=value}: {@code transport} (tcp, rmi, hessian, jgroups), {@code name}, {@code port} (listener), {@code peers}
 * ({@code host:port|…}, manual discovery), {@code multicast=group:port} (automatic, on this container's
 * interface, TTL 1) or {@code dns=name} (the peers are what the name resolves to); or {@code config=<path>}, an
 * {@code ehcache.xml} used as it is (then the arguments above but {@code name} and {@code port} are not read).
 * Prints {@code NODE READY} when started; shuts the CacheManager down on SIGTERM.
 */
public final class ContainerNode implements NodeControlMBean {

    private final CacheManager cacheManager;
    private final String endpoint;
    private final Map<String, long[]> arrivals = new ConcurrentHashMap<>();

    private ContainerNode(CacheManager cacheManager, String endpoint) {
        this.cacheManager = cacheManager;
        this.endpoint = endpoint;
        for (String name : cacheManager.getCacheNames()) {
            AtomicLong count = new AtomicLong();
            long[] state = new long[3];
            arrivals.put(name, state);
            cacheManager.getEhcache(name).getCacheEventNotificationService().registerListener(
                    new CacheEventListenerAdapter() {
                        @Override
                        public void notifyElementPut(Ehcache cache, Element element) {
                            long now = micros();
                            synchronized (state) {
                                if (state[0]++ == 0) {
                                    state[1] = now;
                                }
                                state[2] = now;
                            }
                            count.incrementAndGet();
                        }

                        @Override
                        public void notifyElementUpdated(Ehcache cache, Element element) {
                            notifyElementPut(cache, element);
                        }
                    });
        }
    }

    private static long micros() {
        return Clock.micros();
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new ConcurrentHashMap<>();
        for (String s : argv) {
            int eq = s.indexOf('=');
            a.put(s.substring(0, eq), s.substring(eq + 1));
        }
        String host = InetAddress.getLocalHost().getHostAddress();
        String name = a.getOrDefault("name", InetAddress.getLocalHost().getHostName());
        String port = a.getOrDefault("port", "40001");
        CacheManager cm;
        if (a.containsKey("config")) {
            // a user's ehcache.xml as it is (Ehcache fills its ${...} from the system properties)
            cm = new CacheManager(a.get("config"));
        } else {
            String xml = xml(a.getOrDefault("transport", "tcp"), name, host, port, a.get("peers"),
                    a.get("multicast"), a.get("dns"));
            cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        }
        ContainerNode node = new ContainerNode(cm, host + ":" + port);
        ManagementFactory.getPlatformMBeanServer().registerMBean(new StandardMBean(node, NodeControlMBean.class),
                new ObjectName("io.ehrelay.it:type=Node"));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            cm.shutdown();
            stopped.countDown();
        }));
        System.out.println("NODE READY " + name + " " + node.endpoint);
        System.out.flush();
        stopped.await();
    }

    static String xml(String transport, String name, String host, String port, String peers, String multicast,
                      String dns) {
        String prefix = Profiles.factoryPrefix(transport);
        String discovery;
        boolean jgroups = Profiles.isJGroups(transport);
        if (jgroups) {
            // one cluster; the UDP stack when asked for multicast, else the TCP stack finding the named peers
            discovery = "channelName=containers, bindAddress=" + host;
            if (dns != null) {
                // the shipped DNS stack (DNS_PING): the members are what the name answers, at this port
                discovery += ", dnsName=" + dns + ", bindPort=" + port;
            } else if (multicast != null) {
                String[] gp = multicast.split(":");
                discovery += ", multicastAddress=" + gp[0] + ", multicastPort=" + gp[1] + ", timeToLive=1";
            } else {
                StringBuilder hosts = new StringBuilder(host + "[" + port + "]");
                if (peers != null && !peers.isBlank()) {
                    for (String peer : peers.split("\\|")) {
                        int colon = peer.lastIndexOf(':');
                        hosts.append('|').append(peer, 0, colon).append('[').append(peer.substring(colon + 1)).append(']');
                    }
                }
                discovery += ", file=ehrelay-jgroups-tcp.xml, bindPort=" + port + ", initialHosts=" + hosts;
            }
        } else if (dns != null) {
            // the peers are whatever the name answers, looked up every second
            discovery = "peerDiscovery=dns, dnsName=" + dns + ", dnsIntervalMillis=1000";
        } else if (multicast != null) {
            String[] gp = multicast.split(":");
            discovery = "peerDiscovery=automatic, multicastGroupAddress=" + gp[0] + ", multicastGroupPort=" + gp[1]
                    + ", timeToLive=1, hostName=" + host + ", heartbeatIntervalMillis=250";
        } else {
            discovery = "peerDiscovery=manual";
            if (peers != null && !peers.isBlank()) {
                StringBuilder list = new StringBuilder();
                for (String peer : peers.split("\\|")) {
                    // each peer in the transport's own spelling: rmiUrls=//host:port/cache|... for RMI
                    list.append(", ").append(Profiles.manualPeers(transport, peer, List.of("replay", "bootstrapped")));
                }
                discovery += mergePeerLists(list.toString());
            }
        }
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + name + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"" + prefix + "CacheManagerPeerProviderFactory\"\n"
                + "      properties=\"" + discovery + ", overflowPolicy=block, overflowBlockMillis=600000, queueMaxBytes=8m"
                // the containers are separate hosts on the project's own network, and nothing authenticates yet
                + (prefix.startsWith("io.ehrelay.") ? ", unauthenticatedPeers=any" : "") + "\"/>\n"
                + (jgroups ? "" : "  <cacheManagerPeerListenerFactory class=\"" + prefix + "CacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=" + host + ", port=" + port + "\"/>\n")
                + "  <cache name=\"replay\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\" properties=\"\"/>\n"
                + "  </cache>\n"
                + "  <cache name=\"bootstrapped\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\" properties=\"\"/>\n"
                + "    <bootstrapCacheLoaderFactory class=\"" + prefix + "BootstrapCacheLoaderFactory\"\n"
                + "        properties=\"bootstrapAsynchronously=false, maximumChunkSizeBytes=1000000\"/>\n"
                + "  </cache>\n"
                + "</ehcache>\n";
    }

    /** {@code , peers=a, peers=b} becomes {@code , peers=a|b} (one property per list). */
    private static String mergePeerLists(String entries) {
        String[] parts = entries.substring(2).split(", ");
        String key = parts[0].substring(0, parts[0].indexOf('=') + 1);
        StringBuilder out = new StringBuilder(", ").append(key);
        for (int i = 0; i < parts.length; i++) {
            out.append(i == 0 ? "" : "|").append(parts[i].substring(key.length()));
        }
        return out.toString();
    }

    @Override
    public String getEndpoint() {
        return endpoint;
    }

    @Override
    public long[] write(String cache, int from, int count, int size) {
        Ehcache c = cacheManager.getEhcache(cache);
        Values values = new Values(size);
        long first = micros();
        for (int k = from; k < from + count; k++) {
            c.put(new Element(k, values.make(k)));
        }
        return new long[] {first, micros()};
    }

    @Override
    public long[] arrivals(String cache) {
        long[] state = arrivals.get(cache);
        synchronized (state) {
            return state.clone();
        }
    }

    @Override
    public void resetArrivals(String cache) {
        long[] state = arrivals.get(cache);
        synchronized (state) {
            Arrays.fill(state, 0);
        }
    }

    @Override
    public int[] verify(String cache, int from, int count, int size) {
        Ehcache c = cacheManager.getEhcache(cache);
        Values values = new Values(size);
        int missing = 0;
        int bad = 0;
        int stride = Math.max(1, count / 1000);
        for (int k = from; k < from + count; k++) {
            Element e = c.getQuiet(k);
            if (e == null) {
                missing++;
            } else if ((k - from) % stride == 0 && !values.matches(k, (byte[]) e.getObjectValue())) {
                bad++;
            }
        }
        return new int[] {missing, bad};
    }

    @Override
    public void clear(String cache) {
        cacheManager.getEhcache(cache).removeAll();
        System.gc();
    }

    @Override
    public int size(String cache) {
        return cacheManager.getEhcache(cache).getSize();
    }

    @Override
    public long getPeakHeap() {
        return ReplayNode.peakHeap();
    }
}
