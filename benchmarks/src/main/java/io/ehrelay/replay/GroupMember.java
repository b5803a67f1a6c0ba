package io.ehrelay.replay;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.Peer;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.event.CacheEventListenerAdapter;

/**
 * One member of an E4 group, run as its own JVM by {@link Replay}: {@code key=value} arguments {@code transport},
 * {@code index}, {@code ports} (every member's port, comma-separated), {@code count}, {@code size},
 * {@code writes} (true|false) and {@code expect} (elements it must receive from the others). Lines on stdout:
 * {@code READY} (it reaches every other member) · {@code WROTE firstPutMicros} (after {@code GO}; -1 when it does
 * not write) · {@code DONE firstArrivalMicros lastArrivalMicros received}; it stops on {@code EXIT}.
 */
public final class GroupMember {

    private GroupMember() {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = ReplayNode.keyValues(argv);
        String transport = a.get("transport");
        int index = Integer.parseInt(a.get("index"));
        int[] ports = ReplayNode.ports(a.get("ports"));
        int count = Integer.parseInt(a.get("count"));
        int size = Integer.parseInt(a.get("size"));
        boolean writes = Boolean.parseBoolean(a.get("writes"));
        int expect = Integer.parseInt(a.get("expect"));
        try {
            if (Profiles.STOCK_RMI.equals(transport)) {
                LoopbackRmiSockets.install();
            }
            String xml = Profiles.groupXml(transport, "member" + index + "-" + ProcessHandle.current().pid(), index,
                    ports);
            CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
            Ehcache cache = cm.getEhcache("replay");
            AtomicInteger arrived = new AtomicInteger();
            AtomicLong first = new AtomicLong();
            AtomicLong last = new AtomicLong();
            CountDownLatch all = new CountDownLatch(1);
            String own = "m" + index + "-";
            cache.getCacheEventNotificationService().registerListener(new CacheEventListenerAdapter() {
                @Override
                public void notifyElementPut(Ehcache c, Element e) {
                    if (String.valueOf(e.getObjectKey()).startsWith(own)) {
                        return; // this member's own put
                    }
                    long now = Clock.micros();
                    int n = arrived.incrementAndGet();
                    if (n == 1) {
                        first.set(now);
                    }
                    if (n >= expect) {
                        last.set(now);
                        all.countDown();
                    }
                }
            });
            awaitGroup(cm, transport, ports.length);
            ReplayNode.say("READY");
            ReplayNode.waitFor("GO");
            long firstPut = -1;
            if (writes) {
                byte[] value = new byte[size];
                firstPut = Clock.micros();
                for (int i = 0; i < count; i++) {
                    value[i % size] = (byte) i;
                    cache.put(new Element(own + i, value.clone()));
                }
            }
            ReplayNode.say("WROTE " + firstPut);
            String stalled = expect == 0 ? null : ReplayNode.awaitArrivals(all, arrived, expect, false);
            ReplayNode.say(stalled == null ? "DONE " + first.get() + " " + last.get() + " " + arrived.get()
                    : "ERROR " + stalled);
            ReplayNode.waitFor("EXIT");
            cm.shutdown();
        } catch (Exception | Error e) {
            ReplayNode.say("ERROR " + e);
            e.printStackTrace();
        }
        System.exit(0);
    }

    /** Waits until this member reaches the others (ehrelay: reachable peers; the old JGroups module: its view). */
    private static void awaitGroup(CacheManager cm, String transport, int members) throws Exception {
        if (Profiles.STOCK_RMI.equals(transport)) {
            Thread.sleep(1000); // stock RMI looks its peers up on first use
            return;
        }
        if (Profiles.isStockJGroups(transport)) {
            ReplayNode.awaitStockJGroupsView(cm, members);
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        ReplicationNode node = ReplicationNode.all(cm).get(0);
        while (System.nanoTime() < deadline) {
            int reachable = 0;
            for (Peer p : node.peers()) {
                if (node.transport().isReachable(p)) {
                    reachable++;
                }
            }
            if (reachable >= members - 1) {
                return;
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("the group did not form within 60 s");
    }
}
