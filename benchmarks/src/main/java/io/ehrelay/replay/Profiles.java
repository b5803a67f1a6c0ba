package io.ehrelay.replay;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * The transports the replay knows, and the {@code ehcache.xml} each node of a step is built from. A
 * transport that lands adds itself here. {@code raw} is not a cache: it is one TCP loopback socket carrying
 * the same bytes, the physical reference.
 */
public final class Profiles {

    static final String RAW = "raw";
    private static final String LOOPBACK = "127.0.0.1";
    /** Ehcache 2.10's own RMI replication, unchanged: the baseline users run today. */
    static final String STOCK_RMI = "stock-rmi";
    /** ehrelay's JGroups transport with the shipped TCP stack (TCPPING) and with the UDP stack (multicast on lo). */
    static final String JGROUPS = "jgroups";
    static final String JGROUPS_UDP = "jgroups-udp";
    /**
     * The old {@code ehcache-jgroupsreplication} 1.7 on JGroups 3.6 with {@code connect=} stacks (TCP with TCPPING,
     * UDP on lo): the other baseline. Its nodes run on their own class path (see {@link NodeProcess}).
     */
    static final String STOCK_JGROUPS = "stock-jgroups";
    static final String STOCK_JGROUPS_UDP = "stock-jgroups-udp";
    /**
     * Any cache transport followed by {@code -sync} runs E1/E2 with synchronous replication (each put waits for
     * the peer); {@code stock-rmi-sync} is the baseline the default set includes.
     */
    static final String SYNC_SUFFIX = "-sync";
    static final String STOCK_RMI_SYNC = STOCK_RMI + SYNC_SUFFIX;
    static final List<String> ALL = List.of("tcp", "rmi", "hessian", JGROUPS, JGROUPS_UDP, STOCK_RMI, STOCK_RMI_SYNC,
            STOCK_JGROUPS, STOCK_JGROUPS_UDP, RAW);
    /** ehrelay's transports: name to the class-name prefix of its factories. */
    private static final Map<String, String> EHRELAY = Map.of(
            "tcp", "io.ehrelay.tcp.Tcp",
            "rmi", "io.ehrelay.rmi.Rmi",
            "hessian", "io.ehrelay.hessian.Hessian",
            JGROUPS, "io.ehrelay.jgroups.JGroups",
            JGROUPS_UDP, "io.ehrelay.jgroups.JGroups");

    /** The system property naming a node's replay profile ({@code tuned} when absent). */
    static final String PROFILE_PROPERTY = "ehrelay.replay.profile";

    private Profiles() {
    }

    static String queueMaxBytes() {
        return System.getProperty("ehrelay.replay.queueMaxBytes", "8m");
    }

    /** Provider properties appended to every ehrelay node's (e.g. {@code batchMaxBytes=4m}), to try settings. */
    static String extraProviderProperties() {
        String extra = System.getProperty("ehrelay.replay.providerProperties", "").trim();
        return extra.isEmpty() ? "" : ", " + extra.replace(';', ',');
    }

    /** Warm-up elements before a timed step: about 64 MB, at least 200 and at most 20,000 elements. */
    static int warmupCount(int size) {
        return (int) Math.max(200, Math.min(20_000, (64L << 20) / Math.max(1, size)));
    }

    static boolean isCacheTransport(String transport) {
        return !RAW.equals(transport);
    }

    /** Whether {@code transport} runs a JGroups series (ehrelay's or the old module's) on its UDP stack. */
    static boolean isUdpStack(String transport) {
        return JGROUPS_UDP.equals(transport) || STOCK_JGROUPS_UDP.equals(transport);
    }

    /** Whether {@code transport} is a {@code -sync} variant of a cache transport (E1/E2 with synchronous puts). */
    static boolean isSyncVariant(String transport) {
        if (!transport.endsWith(SYNC_SUFFIX)) {
            return false;
        }
        String base = transport.substring(0, transport.length() - SYNC_SUFFIX.length());
        return isCacheTransport(base) && ALL.contains(base);
    }

    /** The transport a {@code -sync} variant runs ({@code stock-rmi-sync} → {@code stock-rmi}); others unchanged. */
    static String base(String transport) {
        return isSyncVariant(transport) ? transport.substring(0, transport.length() - SYNC_SUFFIX.length())
                : transport;
    }

    /** A transport name the replay accepts: one of {@link #ALL} or a {@code -sync} variant of a cache transport. */
    static boolean isKnown(String transport) {
        return ALL.contains(transport) || isSyncVariant(transport);
    }

    /**
     * @param discovery {@code manual} or {@code multicast:<port>} (loopback only, TTL 0)
     * @param peer      the reader's endpoint, for a writer with manual discovery; may be null
     * @param writer    whether this is the writing node (both keep every element, as in the original setup)
     * @param sync      synchronous replication
     */
    static String ehcacheXml(String transport, String nodeName, String discovery, String peer, boolean writer,
                             boolean sync) {
        if (STOCK_RMI.equals(transport)) {
            return stockRmiXml(nodeName, peer, sync, writer);
        }
        if (isStockJGroups(transport)) {
            int port = Integer.parseInt(peer.substring(peer.lastIndexOf(':') + 1));
            return stockJGroupsXml(transport, nodeName, writer ? port + 1 : port, port, port + 1, sync);
        }
        String prefix = factoryPrefix(transport);
        StringBuilder provider = new StringBuilder();
        if (isJGroups(transport)) {
            // the reader's port comes in peer (127.0.0.1:P): it binds P, the writer P+1; one cluster per step
            int port = Integer.parseInt(peer.substring(peer.lastIndexOf(':') + 1));
            provider.append(jgroupsProperties(transport, writer ? port + 1 : port, port, port + 1));
        } else if (discovery.startsWith("multicast:")) {
            provider.append("peerDiscovery=automatic, multicastGroupAddress=230.0.0.64, multicastGroupPort=")
                    .append(discovery.substring("multicast:".length()))
                    .append(", timeToLive=0, hostName=127.0.0.1, heartbeatIntervalMillis=200");
        } else {
            provider.append("peerDiscovery=manual");
            if (peer != null) {
                provider.append(", ").append(manualPeers(transport, peer, List.of("replay", "warmup")));
            }
        }
        return ehrelayXml(transport, nodeName, provider, LOOPBACK, 0,
                cache(prefix, "replay", sync) + cache(prefix, "warmup", sync));
    }

    /**
     * An ehrelay node's file: the provider with {@code provider} plus the replay's queue settings (a bulk load
     * waits for the queue rather than dropping: the replay moves every element), a listener on 127.0.0.1:{@code
     * port} (none for JGroups), and {@code caches}.
     */
    private static String ehrelayXml(String transport, String nodeName, CharSequence provider, String host, int port,
                                     String caches) {
        if (!tuned()) {
            return ehrelayFile(transport, nodeName, provider + extraProviderProperties(), host, port, caches);
        }
        return ehrelayFile(transport, nodeName, provider + ", overflowPolicy=block, overflowBlockMillis=600000, "
                + "queueMaxBytes=" + queueMaxBytes() + extraProviderProperties(), host, port, caches);
    }

    /**
     * Whether this node runs the tuned profile (the writer's queue blocks for up to 10 minutes and holds at most
     * {@link #queueMaxBytes()}); the {@code default} profile gives the provider the replay's transport and
     * addresses only, as an application's {@code ehcache.xml} with the class names swapped does.
     */
    static boolean tuned() {
        return !"default".equals(System.getProperty(PROFILE_PROPERTY));
    }

    /** An ehrelay node's file with exactly these provider properties. */
    private static String ehrelayFile(String transport, String nodeName, CharSequence provider, String host,
                                      int port, String caches) {
        String prefix = factoryPrefix(transport);
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + nodeName + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"" + prefix + "CacheManagerPeerProviderFactory\"\n"
                + "      properties=\"" + provider + "\"/>\n"
                + (isJGroups(transport) ? ""
                : "  <cacheManagerPeerListenerFactory class=\"" + prefix + "CacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=" + host + ", port=" + port + "\"/>\n")
                + caches
                + "</ehcache>\n";
    }

    static boolean isStockJGroups(String transport) {
        return STOCK_JGROUPS.equals(transport) || STOCK_JGROUPS_UDP.equals(transport);
    }

    /** Transports that are not ehrelay: stock RMI and the old JGroups module. */
    static boolean isStock(String transport) {
        return STOCK_RMI.equals(transport) || isStockJGroups(transport);
    }

    /**
     * The old module as its users configured it: {@code connect=} stacks of JGroups 3 protocols, here on loopback
     * (TCP with TCPPING between the pair's ports, or UDP multicast bound to 127.0.0.1 with TTL 0; FD_SOCK bound
     * there too, and JGroups 3's diagnostics, on by default on every interface, off), its replicator
     * with defaults (asynchronous: batches sent every second). Properties separated by {@code ::}, as its
     * documentation does, because the stacks contain commas.
     */
    static String stockJGroupsXml(String transport, String nodeName, int port, int pairPortA, int pairPortB,
                                  boolean sync) {
        return stockJGroupsXml(transport, nodeName, port, new int[] {pairPortA, pairPortB}, sync);
    }

    static String stockJGroupsXml(String transport, String nodeName, int port, int[] groupPorts, boolean sync) {
        int first = Arrays.stream(groupPorts).min().getAsInt();
        StringBuilder hosts = new StringBuilder();
        for (int p : groupPorts) {
            hosts.append(hosts.length() == 0 ? "" : ",").append("127.0.0.1[").append(p).append(']');
        }
        String tail = ":MERGE3:FD_SOCK(bind_addr=127.0.0.1):FD_ALL:VERIFY_SUSPECT(timeout=1500):BARRIER"
                + ":pbcast.NAKACK2(use_mcast_xmit=" + STOCK_JGROUPS_UDP.equals(transport) + ")"
                + ":UNICAST3:pbcast.STABLE(desired_avg_gossip=50000;max_bytes=4M)"
                + ":pbcast.GMS(join_timeout=2000;print_local_addr=false):UFC:MFC:FRAG2(frag_size=60K)";
        String stack = STOCK_JGROUPS_UDP.equals(transport)
                ? "UDP(bind_addr=127.0.0.1;mcast_addr=230.0.0.66;mcast_port=" + first + ";ip_ttl=0;enable_diagnostics=false):PING"
                + tail
                : "TCP(bind_addr=127.0.0.1;bind_port=" + port + ";port_range=0;enable_diagnostics=false)"
                + ":TCPPING(initial_hosts=" + hosts + ";port_range=0)"
                + tail;
        String replicator = "    <cacheEventListenerFactory class=\"net.sf.ehcache.distribution.jgroups.JGroupsCacheReplicatorFactory\"\n"
                + "        properties=\"replicateAsynchronously=" + !sync + "\"/>\n";
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + nodeName + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"net.sf.ehcache.distribution.jgroups.JGroupsCacheManagerPeerProviderFactory\"\n"
                + "      properties=\"channelName=replay-" + first + "::connect=" + stack + "\" propertySeparator=\"::\"/>\n"
                + "  <cache name=\"replay\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n" + replicator + "  </cache>\n"
                + "  <cache name=\"warmup\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n" + replicator + "  </cache>\n"
                + "</ehcache>\n";
    }

    /**
     * The {@code ehcache.xml} of member {@code index} of an E4 group on loopback: it listens on
     * {@code ports[index]} and knows every other member (manual peer lists, TCPPING hosts, or the multicast
     * group on {@code ports[0]}); one asynchronous cache {@code replay}.
     */
    static String groupXml(String transport, String nodeName, int index, int[] ports) {
        return groupXml(transport, nodeName, index, ports, null);
    }

    /**
     * The file of a node of the fault scenarios: like a group member's, but with the provider settings an
     * operator would use (a bounded queue that drops and counts, short send timeouts: {@code faultSettings}) and a
     * synchronous bootstrap of the cache on start.
     */
    static String faultXml(String transport, String nodeName, int index, int[] ports, int[] reach,
                           String faultSettings) {
        return groupXml(transport, nodeName, index, ports, reach, faultSettings, null);
    }

    /** As above, each node {@code i} listening on {@code hosts[i]} (its own network namespace's address). */
    static String faultXml(String transport, String nodeName, int index, int[] ports, int[] reach,
                           String faultSettings, String[] hosts) {
        return groupXml(transport, nodeName, index, ports, reach, faultSettings, hosts);
    }

    private static String groupXml(String transport, String nodeName, int index, int[] ports, String faultSettings) {
        return groupXml(transport, nodeName, index, ports, ports, faultSettings, null);
    }

    /**
     * @param reach the port this node reaches each member at (a member's own port, or a proxy in front of it)
     * @param hosts each member's address, or {@code null}: all on 127.0.0.1
     */
    private static String groupXml(String transport, String nodeName, int index, int[] ports, int[] reach,
                                   String faultSettings, String[] hosts) {
        IntFunction<String> host = i -> hosts == null ? LOOPBACK : hosts[i];
        int own = ports[index];
        if (isStockJGroups(transport)) {
            return stockJGroupsXml(transport, nodeName, own, ports, false);
        }
        List<String> others = new ArrayList<>(); // host:port of every other member
        for (int i = 0; i < ports.length; i++) {
            if (i != index) {
                others.add(host.apply(i) + ":" + reach[i]);
            }
        }
        if (STOCK_RMI.equals(transport)) {
            StringBuilder urls = new StringBuilder();
            for (String p : others) {
                urls.append(urls.length() == 0 ? "" : "|").append("//").append(p).append("/replay");
            }
            String replicator = "    <cacheEventListenerFactory class=\"net.sf.ehcache.distribution.RMICacheReplicatorFactory\"\n"
                    + "        properties=\"replicateAsynchronously=true\"/>\n";
            return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + nodeName + "\">\n"
                    + "  <cacheManagerPeerProviderFactory class=\"net.sf.ehcache.distribution.RMICacheManagerPeerProviderFactory\"\n"
                    + "      properties=\"peerDiscovery=manual, rmiUrls=" + urls + "\"/>\n"
                    + "  <cacheManagerPeerListenerFactory class=\"net.sf.ehcache.distribution.RMICacheManagerPeerListenerFactory\"\n"
                    + "      properties=\"hostName=" + host.apply(index) + ", port=" + own
                    + ", socketTimeoutMillis=120000\"/>\n"
                    + "  <cache name=\"replay\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n" + replicator + "  </cache>\n"
                    + "</ehcache>\n";
        }
        String prefix = factoryPrefix(transport);
        StringBuilder provider = new StringBuilder();
        if (isJGroups(transport)) {
            int first = Arrays.stream(ports).min().getAsInt();
            provider.append("channelName=group-").append(first).append(", bindAddress=").append(host.apply(index));
            if (JGROUPS_UDP.equals(transport)) {
                provider.append(", multicastAddress=230.0.0.67, multicastPort=").append(first).append(", timeToLive=0");
            } else {
                provider.append(", file=ehrelay-jgroups-tcp.xml, bindPort=").append(own).append(", initialHosts=");
                for (int i = 0; i < ports.length; i++) {
                    provider.append(i == 0 ? "" : "|").append(host.apply(i)).append('[').append(ports[i]).append(']');
                }
            }
        } else {
            provider.append("peerDiscovery=manual, ");
            if ("rmi".equals(transport)) {
                provider.append("rmiUrls=");
                for (int i = 0; i < others.size(); i++) {
                    provider.append(i == 0 ? "" : "|").append("//").append(others.get(i)).append("/replay");
                }
            } else {
                provider.append("peers=");
                for (int i = 0; i < others.size(); i++) {
                    String peer = others.get(i);
                    provider.append(i == 0 ? "" : "|").append("hessian".equals(transport)
                            ? "http://" + peer + "/ehrelay" : peer);
                }
            }
        }
        if (faultSettings != null) {
            String cache = "  <cache name=\"replay\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                    + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\"\n"
                    + "        properties=\"replicateAsynchronously=true\"/>\n"
                    + "    <bootstrapCacheLoaderFactory class=\"" + prefix + "BootstrapCacheLoaderFactory\"\n"
                    + "        properties=\"bootstrapAsynchronously=false\"/>\n"
                    + "  </cache>\n";
            return ehrelayFile(transport, nodeName, provider + ", " + faultSettings, host.apply(index), own, cache);
        }
        return ehrelayXml(transport, nodeName, provider, host.apply(index), own, cache(prefix, "replay", false));
    }

    public static boolean isJGroups(String transport) {
        return JGROUPS.equals(transport) || JGROUPS_UDP.equals(transport);
    }

    /**
     * Provider properties of a JGroups node of a pair on loopback: the TCP stack binding {@code port} and finding
     * the pair's ports by TCPPING, or the UDP stack with multicast on lo (TTL 0) on the lower port; the cluster
     * is named after the lower port, so each pair has its own.
     */
    static String jgroupsProperties(String transport, int port, int pairPortA, int pairPortB) {
        int first = Math.min(pairPortA, pairPortB);
        String common = "channelName=replay-" + first + ", bindAddress=127.0.0.1";
        if (JGROUPS_UDP.equals(transport)) {
            return common + ", multicastAddress=230.0.0.65, multicastPort=" + first + ", timeToLive=0";
        }
        return common + ", file=ehrelay-jgroups-tcp.xml, bindPort=" + port + ", initialHosts=127.0.0.1["
                + pairPortA + "]|127.0.0.1[" + pairPortB + "]";
    }

    static boolean isEhrelay(String transport) {
        return EHRELAY.containsKey(transport);
    }

    /** The class-name prefix of an ehrelay transport's factories, e.g. {@code io.ehrelay.tcp.Tcp}. */
    public static String factoryPrefix(String transport) {
        String prefix = EHRELAY.get(transport);
        if (prefix == null) {
            throw new IllegalArgumentException("unknown transport '" + transport + "'; known: " + ALL);
        }
        return prefix;
    }

    /**
     * The manual peer property for one peer {@code host:port}: {@code peers=} for TCP, stock-style
     * {@code rmiUrls=//host:port/cache|...} for RMI (a user's file with only the class names changed),
     * {@code peers=http://host:port/ehrelay} for Hessian (a peer that already is a URL is kept).
     */
    public static String manualPeers(String transport, String peer, List<String> caches) {
        if ("rmi".equals(transport)) {
            StringBuilder urls = new StringBuilder("rmiUrls=");
            for (int i = 0; i < caches.size(); i++) {
                urls.append(i == 0 ? "" : "|").append("//").append(peer).append('/').append(caches.get(i));
            }
            return urls.toString();
        }
        if ("hessian".equals(transport)) {
            return "peers=" + (peer.startsWith("http") ? peer : "http://" + peer + "/ehrelay");
        }
        factoryPrefix(transport);
        return "peers=" + peer;
    }

    /** The provider scheme a writer waits on for its peer. */
    static String scheme(String transport) {
        return STOCK_RMI.equals(transport) || "rmi".equals(transport) ? "RMI" : isStockJGroups(transport) ? "JGroups"
                : isJGroups(transport) ? "ehrelay-jgroups" : "ehrelay-" + transport;
    }

    /**
     * Stock RMI with its defaults (asynchronous: one replication thread per cache, 1 s interval, batches of
     * 1,000). The reader listens on the port in {@code peer} ({@code host:port}); the writer lists the reader's
     * caches as {@code rmiUrls}.
     */
    private static String stockRmiXml(String nodeName, String peer, boolean sync, boolean writer) {
        int colon = peer.lastIndexOf(':');
        String host = peer.substring(0, colon);
        String port = peer.substring(colon + 1);
        String provider = writer ? "peerDiscovery=manual, rmiUrls=//" + peer + "/replay|//" + peer + "/warmup"
                : "peerDiscovery=manual";
        String listener = writer ? ""
                : "  <cacheManagerPeerListenerFactory class=\"net.sf.ehcache.distribution.RMICacheManagerPeerListenerFactory\"\n"
                + "      properties=\"hostName=" + host + ", port=" + port + ", socketTimeoutMillis=120000\"/>\n";
        String replicator = "    <cacheEventListenerFactory class=\"net.sf.ehcache.distribution.RMICacheReplicatorFactory\"\n"
                + "        properties=\"replicateAsynchronously=" + !sync + "\"/>\n";
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + nodeName + "\">\n"
                + "  <cacheManagerPeerProviderFactory class=\"net.sf.ehcache.distribution.RMICacheManagerPeerProviderFactory\"\n"
                + "      properties=\"" + provider + "\"/>\n"
                + listener
                + "  <cache name=\"replay\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n" + replicator + "  </cache>\n"
                + "  <cache name=\"warmup\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n" + replicator + "  </cache>\n"
                + "</ehcache>\n";
    }

    private static String cache(String prefix, String name, boolean sync) {
        return "  <cache name=\"" + name + "\" maxEntriesLocalHeap=\"0\" eternal=\"true\">\n"
                + "    <cacheEventListenerFactory class=\"" + prefix + "CacheReplicatorFactory\"\n"
                + "        properties=\"replicateAsynchronously=" + !sync + ", syncTimeoutMillis=10000\"/>\n"
                + "  </cache>\n";
    }
}
