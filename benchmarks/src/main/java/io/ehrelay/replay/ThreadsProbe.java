package io.ehrelay.replay;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import com.codahale.metrics.Gauge;
import io.ehrelay.internal.engine.NodeThreads;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.provider.Ehrelay;
import io.ehrelay.spi.Peer;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;

/**
 * The threads-per-region probe: two CacheManagers in this JVM replicating 10, 100 and 1,000 caches to each
 * other, one element put in every cache; reports the JVM's live threads added by the pair, and for ehrelay its
 * threads and its {@code threadsPerRegion} metric. Stock RMI starts a replication thread per cache.
 */
final class ThreadsProbe {

    private ThreadsProbe() {
    }

    /** One probe: a pair of nodes of {@code transport} replicating {@code caches} caches; or why it was not probed. */
    record Row(String transport, int caches, int added, String ehrelayThreads, String perRegion, boolean allReplicated,
               String notProbed) {

        static final String HEADER = "| transport | caches | JVM threads added by 2 nodes | ehrelay threads (per node) "
                + "| threadsPerRegion (max) | all replicated |\n|---|---:|---:|---:|---:|---|";

        String markdown() {
            if (notProbed != null) {
                return "| " + transport + " | - | not probed: " + notProbed + " | - | - | - |";
            }
            return String.format(Locale.ROOT, "| %s | %,d | %d | %s | %s | %s |", transport, caches, added,
                    ehrelayThreads, perRegion, allReplicated ? "yes" : "NO");
        }

        String csv() {
            return String.format(Locale.ROOT, "%s,%d,%s,%s,%s,%s", transport, caches,
                    notProbed == null ? Integer.toString(added) : "", ehrelayThreads, perRegion,
                    notProbed != null ? "not probed: " + notProbed.replace(',', ';') : allReplicated ? "ok" : "FAIL");
        }

        /** A row of {@link #csv()} read back (for {@code --render}). */
        static Row parseCsv(String line) {
            String[] f = line.split(",", -1);
            if (f.length < 6) {
                throw new IllegalArgumentException("not a threads CSV row: " + line);
            }
            String notProbed = f[5].startsWith("not probed: ") ? f[5].substring("not probed: ".length()) : null;
            return new Row(f[0], Integer.parseInt(f[1]), f[2].isEmpty() ? 0 : Integer.parseInt(f[2]), f[3], f[4],
                    "ok".equals(f[5]), notProbed);
        }
    }

    static List<Row> run(List<String> transports, int[] cacheCounts) throws Exception {
        LoopbackRmiSockets.install();
        List<Row> rows = new ArrayList<>();
        System.out.println(Row.HEADER);
        for (String t : transports) {
            if (!Profiles.isCacheTransport(t) || Profiles.isSyncVariant(t)) {
                continue;
            }
            if (Profiles.isStockJGroups(t)) {
                // JGroups 3 cannot share this JVM with JGroups 5; the old module uses one channel per
                // CacheManager and JGroups' pools, so its count does not depend on the caches either
                Row row = new Row(t, 0, 0, "-", "-", false, "needs JGroups 3 on its own class path");
                System.out.println(row.markdown());
                rows.add(row);
                continue;
            }
            for (int n : cacheCounts) {
                Row row = probe(t, n);
                System.out.println(row.markdown());
                rows.add(row);
            }
        }
        return rows;
    }

    private static Row probe(String transport, int caches) throws Exception {
        System.gc();
        Thread.sleep(200);
        int before = Thread.activeCount();
        int portA = ReplayNode.freePort();
        int portB = ReplayNode.freePort();
        CacheManager a = start(transport, "probe-a-" + caches, portA, portB, caches);
        CacheManager b = start(transport, "probe-b-" + caches, portB, portA, caches);
        try {
            long deadline = System.nanoTime() + 60_000_000_000L;
            awaitConnected(transport, a, b, deadline);
            for (int i = 0; i < caches; i++) {
                a.getEhcache("region-" + i).put(new Element("k", "v"));
            }
            boolean all = false;
            while (!all && System.nanoTime() < deadline) {
                all = true;
                for (int i = 0; i < caches && all; i++) {
                    all = b.getEhcache("region-" + i).get("k") != null;
                }
                if (!all) {
                    Thread.sleep(20);
                }
            }
            int added = Thread.activeCount() - before;
            String ehrelayThreads = "-";
            String perRegion = "-";
            if (!Profiles.STOCK_RMI.equals(transport)) {
                ehrelayThreads = Integer.toString(threadsOf(a));
                int max = 0;
                // the transport's name in metric names (jgroups-udp is the jgroups transport)
                String metricsName = ReplicationNode.all(a).get(0).metrics().transport();
                for (int i = 0; i < caches; i++) {
                    Object g = Ehrelay.metricRegistry(a).getGauges().get(ObjectNames.cacheMetric(a.getName(),
                            metricsName, "region-" + i, "threadsPerRegion"));
                    max = Math.max(max, g == null ? 0 : ((Number) ((Gauge<?>) g).getValue()).intValue());
                }
                perRegion = Integer.toString(max);
            }
            return new Row(transport, caches, added, ehrelayThreads, perRegion, all, null);
        } finally {
            a.shutdown();
            b.shutdown();
        }
    }

    private static int threadsOf(CacheManager cm) {
        int n = 0;
        for (Thread th : Thread.getAllStackTraces().keySet()) {
            if (th.isAlive() && th.getName().startsWith(NodeThreads.PREFIX) && th.getName().contains("-" + cm.getName() + "-")) {
                n++;
            }
        }
        return n;
    }

    /** The pair is formed (each reaches the other) before the probe writes, as an application would find it. */
    private static void awaitConnected(String transport, CacheManager a, CacheManager b, long deadline)
            throws InterruptedException {
        if (Profiles.STOCK_RMI.equals(transport)) {
            return;
        }
        while (System.nanoTime() < deadline && !(reaches(a) && reaches(b))) {
            Thread.sleep(10);
        }
    }

    private static boolean reaches(CacheManager cm) {
        ReplicationNode node = ReplicationNode.all(cm).get(0);
        for (Peer p : node.peers()) {
            if (!node.transport().isReachable(p)) {
                return false;
            }
        }
        return !node.peers().isEmpty();
    }

    private static CacheManager start(String transport, String name, int port, int peerPort, int caches) {
        StringBuilder xml = new StringBuilder("<ehcache updateCheck=\"false\" monitoring=\"off\" name=\"" + name + "\">\n");
        String replicator;
        if (Profiles.STOCK_RMI.equals(transport)) {
            StringBuilder urls = new StringBuilder();
            for (int i = 0; i < caches; i++) {
                urls.append(i == 0 ? "" : "|").append("//127.0.0.1:").append(peerPort).append("/region-").append(i);
            }
            xml.append("<cacheManagerPeerProviderFactory class=\"net.sf.ehcache.distribution.RMICacheManagerPeerProviderFactory\""
                    + " properties=\"peerDiscovery=manual, rmiUrls=").append(urls).append("\"/>\n");
            xml.append("<cacheManagerPeerListenerFactory class=\"net.sf.ehcache.distribution.RMICacheManagerPeerListenerFactory\""
                    + " properties=\"hostName=127.0.0.1, port=").append(port).append("\"/>\n");
            replicator = "net.sf.ehcache.distribution.RMICacheReplicatorFactory";
        } else {
            String prefix = Profiles.factoryPrefix(transport);
            List<String> names = new ArrayList<>();
            for (int i = 0; i < caches; i++) {
                names.add("region-" + i);
            }
            if (Profiles.isJGroups(transport)) {
                xml.append("<cacheManagerPeerProviderFactory class=\"").append(prefix)
                        .append("CacheManagerPeerProviderFactory\" properties=\"")
                        .append(Profiles.jgroupsProperties(transport, port, port, peerPort))
                        .append("\"/>\n");
            } else {
                xml.append("<cacheManagerPeerProviderFactory class=\"").append(prefix)
                        .append("CacheManagerPeerProviderFactory\" properties=\"peerDiscovery=manual, ")
                        .append(Profiles.manualPeers(transport, "127.0.0.1:" + peerPort, names)).append("\"/>\n");
                xml.append("<cacheManagerPeerListenerFactory class=\"").append(prefix)
                        .append("CacheManagerPeerListenerFactory\" properties=\"hostName=127.0.0.1, port=")
                        .append(port).append("\"/>\n");
            }
            replicator = prefix + "CacheReplicatorFactory";
        }
        for (int i = 0; i < caches; i++) {
            xml.append("<cache name=\"region-").append(i).append("\" maxEntriesLocalHeap=\"100\" eternal=\"true\">")
                    .append("<cacheEventListenerFactory class=\"").append(replicator).append("\"/></cache>\n");
        }
        xml.append("</ehcache>\n");
        CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.toString().getBytes(StandardCharsets.UTF_8)));
        if (!Profiles.STOCK_RMI.equals(transport) && ReplicationNode.all(cm).isEmpty()) {
            throw new IllegalStateException("no ehrelay node for " + name);
        }
        return cm;
    }
}
