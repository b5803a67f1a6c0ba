package io.ehrelay.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.rmi.RemoteException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import javax.management.JMException;
import javax.management.ObjectName;

import com.codahale.metrics.MetricRegistry;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.engine.NodeThreads;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.provider.Ehrelay;
import io.ehrelay.spi.Peer;
import io.ehrelay.testing.CacheKeys;
import io.ehrelay.testing.LogCapture;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.Status;
import net.sf.ehcache.distribution.CacheManagerPeerListener;
import net.sf.ehcache.distribution.CacheManagerPeerProvider;
import net.sf.ehcache.distribution.CachePeer;
import net.sf.ehcache.event.CacheEventListenerAdapter;
import net.sf.ehcache.util.ProductInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * The contract every ehrelay transport meets, run by each transport module through one subclass that supplies
 * its {@link TransportFixture}. Real CacheManagers, built from {@code contract-ehcache.xml}, replicate through
 * the transport under test; the assertions read caches and, where metrics are concerned, JMX.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ReplicationContractTest {

    protected ContractCluster cluster;

    private final List<CacheManager> started = new ArrayList<>();

    protected abstract TransportFixture fixture();

    @BeforeEach
    void startCluster() {
        cluster = new ContractCluster(fixture());
        Gadget.readObjectRan = false;
    }

    @AfterEach
    void stopCluster() {
        cluster.close();
    }

    private static Ehcache cache(CacheManager cm, String name) {
        return cm.getEhcache(name);
    }

    private static void awaitValue(CacheManager cm, String cache, Object key, Object expected) {
        Await.until(() -> {
            Element e = cm.getEhcache(cache).get(key);
            return e != null && Objects.deepEquals(e.getObjectValue(), expected);
        }, () -> cm.getName() + "/" + cache + " has " + cm.getEhcache(cache).get(key) + ", expected " + expected);
    }

    private static void awaitAbsent(CacheManager cm, String cache, Object key) {
        Await.until(() -> cm.getEhcache(cache).get(key) == null,
                () -> cm.getName() + "/" + cache + " still has " + key);
    }

    /** Quiet period check: a condition that must stay true while replication had time to act. */
    private void settle(CacheManager a, String cache) {
        // a marker put after the action: once it arrives, anything sent before it (same cache, same order) has too
        Object marker = "marker-" + System.nanoTime();
        a.getEhcache(cache).put(new Element(marker, "m"));
        for (CacheManager other : peersOf(a)) {
            awaitValue(other, cache, marker, "m");
        }
    }

    private CacheManager node(String label) {
        CacheManager cm = cluster.start(label);
        started.add(cm);
        return cm;
    }

    private CacheManager node(String label, String props) {
        CacheManager cm = cluster.start(label, props);
        started.add(cm);
        return cm;
    }

    private List<CacheManager> peersOf(CacheManager cm) {
        List<CacheManager> out = new ArrayList<>(started);
        out.remove(cm);
        out.removeIf(m -> m.getStatus() != Status.STATUS_ALIVE);
        return out;
    }

    // ---- the class path the suite runs on -------------------------------------------------------------------

    /**
     * The build runs this suite twice per transport: on the class path it was built against, and on the oldest
     * one an Ehcache 2 application may have (Ehcache 2.6, slf4j 1.6, metrics-core 3.0). This checks the run
     * really has the jars it claims (system property {@code ehrelay.expectClasspath}, set by the build).
     */
    @Test
    void runsOnTheClassPathTheBuildChose() {
        String expected = System.getProperty("ehrelay.expectClasspath");
        assertThat(expected).as("system property ehrelay.expectClasspath (set in the parent pom)")
                .isIn("built", "oldest");
        String ehcache = new ProductInfo().getVersion();
        if (expected.equals("oldest")) {
            assertThat(ehcache).isEqualTo(System.getProperty("ehrelay.expectEhcache"));
            for (Class<?> c : new Class<?>[] {CacheManager.class, LoggerFactory.class,
                MetricRegistry.class}) {
                assertThat(c.getProtectionDomain().getCodeSource().getLocation().toString()).as("jar of %s", c)
                        .contains("oldest-classpath");
            }
        } else {
            assertThat(ehcache).isEqualTo(System.getProperty("ehrelay.expectEhcache"));
        }
    }

    // ---- operations ----------------------------------------------------------------------------------------

    @Test
    void asyncPut_replicatesEveryValueKind() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        Object[] values = {"text", new byte[] {1, 2, 3}, 42, 42L, (short) 7, (byte) 3, 'c', true, 1.5f, 2.5d,
            new ArrayList<>(List.of("x", "y")), new HashMap<>(Map.of("a", 1)),
            new HashSet<>(List.of(1L, 2L)), new Date(1234), new BigDecimal("12.50"),
            UUID.randomUUID(), null};
        for (int i = 0; i < values.length; i++) {
            cache(a, "async").put(new Element("k" + i, values[i]));
        }
        for (int i = 0; i < values.length; i++) {
            if (values[i] == null) {
                final int at = i;
                Await.until(() -> cache(b, "async").get("k" + at) != null, () -> "null value not replicated");
                assertThat(cache(b, "async").get("k" + at).getObjectValue()).isNull();
            } else {
                awaitValue(b, "async", "k" + i, values[i]);
            }
        }
    }

    @Test
    void nonStringKeys_replicate() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(a, "async").put(new Element(17L, "long key"));
        cache(a, "async").put(new Element(UUID.nameUUIDFromBytes(new byte[] {1}), "uuid key"));
        awaitValue(b, "async", 17L, "long key");
        awaitValue(b, "async", UUID.nameUUIDFromBytes(new byte[] {1}), "uuid key");
    }

    @Test
    void update_replicatesLatestValue() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(a, "async").put(new Element("k", "v1"));
        awaitValue(b, "async", "k", "v1");
        cache(a, "async").put(new Element("k", "v2"));
        awaitValue(b, "async", "k", "v2");
    }

    @Test
    void remove_andRemoveAll_replicate() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        for (int i = 0; i < 10; i++) {
            cache(a, "async").put(new Element("k" + i, i));
        }
        awaitValue(b, "async", "k9", 9);
        cache(a, "async").remove("k0");
        awaitAbsent(b, "async", "k0");
        assertThat(cache(b, "async").get("k1")).isNotNull();
        cache(a, "async").removeAll();
        Await.until(() -> cache(b, "async").getSize() == 0, () -> "removeAll left " + cache(b, "async").getSize());
    }

    /**
     * Each put reaches the peers as a put, as with stock Ehcache, even when the application removes the keys at
     * once (the puts still queued): the peers' listeners see every one, then the removals. Puts of fast-path types
     * (Long keys, byte arrays), which the dispatcher encodes from the queue.
     */
    @Test
    void putsRemovedAtOnce_stillReachThePeersListenersAsPuts() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        AtomicInteger puts = new AtomicInteger();
        cache(b, "async").getCacheEventNotificationService().registerListener(new CacheEventListenerAdapter() {
            @Override
            public void notifyElementPut(Ehcache cache, Element element) {
                puts.incrementAndGet();
            }
        });
        int n = 2000;
        for (long k = 0; k < n; k++) {
            cache(a, "async").put(new Element(k, new byte[] {(byte) k, 1}));
            if (k % 2 == 0) {
                cache(a, "async").remove(k);
            }
        }
        cache(a, "async").removeAll();
        Await.until(() -> puts.get() == n, () -> "b's listeners saw " + puts.get() + " of " + n + " puts");
        Await.until(() -> cache(b, "async").getSize() == 0, () -> "b holds " + cache(b, "async").getSize());
    }

    @Test
    void syncPut_isOnPeerWhenPutReturns() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        for (int i = 0; i < 200; i++) {
            cache(a, "sync").put(new Element("k" + i, "v" + i));
            Element e = cache(b, "sync").get("k" + i);
            assertThat(e).as("element k%d on the peer right after a synchronous put", i).isNotNull();
            assertThat(e.getObjectValue()).isEqualTo("v" + i);
        }
        cache(a, "sync").remove("k0");
        assertThat(cache(b, "sync").get("k0")).isNull();
        cache(a, "sync").removeAll();
        assertThat(cache(b, "sync").getSize()).isZero();
        assertThat(cluster.jmx(a).cacheCount("sync", "syncRoundTrip")).isGreaterThanOrEqualTo(202);
    }

    /**
     * A peer gone without a word (it crashed: its transport stops before it could tell anyone). A manual peer stays
     * listed: a synchronous put to it fails, naming it, and is counted. A member found by discovery (a JGroups
     * view) drops out of the peers, and a synchronous put then succeeds without waiting for it; nothing counts as
     * failed.
     */
    @Test
    void syncPut_withPeerCrashed_failsNamingAManualPeer_orSucceedsOnceDiscoveryDropsIt() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        String bEndpoint = cluster.endpoint(b);
        cluster.node(b).transport().stop(); // as a crash: b neither listens nor says anything any more
        if (fixture().manualDiscovery()) {
            assertThatThrownBy(() -> cache(a, "sync").put(new Element("k", "v")))
                    .isInstanceOf(CacheException.class)
                    .hasMessageContaining(bEndpoint);
            assertThat(cluster.jmx(a).cacheCount("sync", "failed")).isEqualTo(1);
        } else {
            Await.until(() -> cluster.node(a).peers().isEmpty(), () -> "a still lists " + cluster.node(a).peers());
            cache(a, "sync").put(new Element("k", "v"));
            assertThat(cache(a, "sync").get("k").getObjectValue()).isEqualTo("v");
            assertThat(cluster.jmx(a).cacheCount("sync", "failed")).isZero();
        }
    }

    /**
     * A peer that shut down told its peers it holds no cache any more: a synchronous put no longer waits for it
     * and succeeds, as with stock, whose lookup of a stopped peer fails and leaves it out; nothing counts as failed.
     */
    @Test
    void syncPut_withPeerShutDown_succeeds_countingNothingFailed() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        b.shutdown();
        cache(a, "sync").put(new Element("k", "v"));
        assertThat(cache(a, "sync").get("k").getObjectValue()).isEqualTo("v");
        assertThat(cluster.jmx(a).cacheCount("sync", "failed")).isZero();
    }

    @Test
    void invalidation_removesPeerCopyInsteadOfSendingValue() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(b, "invalidate").putQuiet(new Element("k", "stale"));
        cache(a, "invalidate").put(new Element("k", "fresh"));
        awaitAbsent(b, "invalidate", "k");
        assertThat(cache(a, "invalidate").get("k").getObjectValue()).isEqualTo("fresh");
        cache(a, "invalidate").put(new Element("other", "value"));
        Jmx jb = cluster.jmx(b);
        Await.until(() -> jb.cacheCount("invalidate", "applied") == 2, () -> "applied " + jb.cacheCount("invalidate", "applied"));
        assertThat(cache(b, "invalidate").get("other")).as("an invalidation never carries the value").isNull();
    }

    @Test
    void replicateRemovalsFalse_keepsPeerCopy() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(a, "noRemovals").put(new Element("k", "v"));
        awaitValue(b, "noRemovals", "k", "v");
        cache(a, "noRemovals").remove("k");
        cache(a, "noRemovals").removeAll();
        settle(a, "noRemovals");
        assertThat(cache(b, "noRemovals").get("k")).isNotNull();
    }

    @Test
    void replicatePutsFalse_skipsNewKeysButReplicatesUpdates() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(a, "noPuts").put(new Element("k", "v1"));
        // with replicatePuts=false only updates travel: a marker written twice arrives by its update
        cache(a, "noPuts").put(new Element("marker", "m1"));
        cache(a, "noPuts").put(new Element("marker", "m2"));
        awaitValue(b, "noPuts", "marker", "m2");
        assertThat(cache(b, "noPuts").get("k")).isNull();
        cache(a, "noPuts").put(new Element("k", "v2"));
        awaitValue(b, "noPuts", "k", "v2");
    }

    @Test
    void replicateUpdatesFalse_skipsUpdates() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(a, "noUpdates").put(new Element("k", "v1"));
        awaitValue(b, "noUpdates", "k", "v1");
        cache(a, "noUpdates").put(new Element("k", "v2"));
        cache(a, "noUpdates").put(new Element("marker", "m"));
        awaitValue(b, "noUpdates", "marker", "m");
        assertThat(cache(b, "noUpdates").get("k").getObjectValue()).isEqualTo("v1");
    }

    @Test
    void elementMetadata_survivesTheTrip() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        Element e = new Element("k", "v");
        e.setVersion(42);
        e.setTimeToLive(300);
        e.setTimeToIdle(120);
        cache(a, "expiring").put(e);
        Element eternal = new Element("eternal", "v");
        eternal.setEternal(true);
        cache(a, "expiring").put(eternal);
        Element defaults = new Element("defaults", "v");
        cache(a, "expiring").put(defaults);
        awaitValue(b, "expiring", "defaults", "v");
        Element local = cache(a, "expiring").getQuiet("k");
        Element remote = cache(b, "expiring").getQuiet("k");
        assertThat(remote.getVersion()).isEqualTo(42);
        assertThat(remote.getTimeToLive()).isEqualTo(300);
        assertThat(remote.getTimeToIdle()).isEqualTo(120);
        assertThat(remote.getCreationTime()).isEqualTo(local.getCreationTime());
        assertThat(remote.isEternal()).isFalse();
        assertThat(cache(b, "expiring").getQuiet("eternal").isEternal()).isTrue();
        Element remoteDefaults = cache(b, "expiring").getQuiet("defaults");
        assertThat(remoteDefaults.usesCacheDefaultLifespan()).isTrue();
        assertThat(remoteDefaults.getTimeToLive()).isEqualTo(3600);
    }

    @Test
    void perCacheOrder_isPreserved() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
        cache(b, "async").getCacheEventNotificationService().registerListener(new CacheEventListenerAdapter() {
            @Override
            public void notifyElementPut(Ehcache cache, Element element) {
                if ("counter".equals(element.getObjectKey())) {
                    seen.add((Integer) element.getObjectValue());
                }
            }

            @Override
            public void notifyElementUpdated(Ehcache cache, Element element) {
                notifyElementPut(cache, element);
            }
        });
        int n = 5000;
        for (int i = 0; i < n; i++) {
            cache(a, "async").put(new Element("counter", i));
        }
        awaitValue(b, "async", "counter", n - 1);
        List<Integer> copy = new ArrayList<>(seen);
        assertThat(copy).hasSize(n);
        for (int i = 0; i < n; i++) {
            assertThat(copy.get(i)).as("update #%d", i).isEqualTo(i);
        }
    }

    /**
     * Many batches of about 1 MB, of varying lengths, one after the other: a receiver that reads batches into
     * arrays it reuses must apply each batch before its array takes the next one, and read no byte past the batch.
     * Every value arrives exactly as written.
     */
    @Test
    void manyLargeBatches_ofVaryingLength_arriveByteForByte() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        int n = 400;
        IntFunction<byte[]> value = k -> {
            byte[] v = new byte[4096 + (k * 7919) % 57_000];
            for (int i = 0; i < v.length; i++) {
                v[i] = (byte) (k * 31 + i);
            }
            return v;
        };
        for (int k = 0; k < n; k++) {
            cache(a, "async").put(new Element(k, value.apply(k)));
        }
        Await.until(() -> cache(b, "async").getSize() == n, () -> "arrived: " + cache(b, "async").getSize());
        for (int k = 0; k < n; k++) {
            assertThat((byte[]) cache(b, "async").getQuiet(k).getObjectValue()).as("value %d", k)
                    .isEqualTo(value.apply(k));
        }
    }

    @Test
    void appliedEvents_doNotEchoBack() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        for (int i = 0; i < 100; i++) {
            cache(a, "async").put(new Element("k" + i, i));
        }
        awaitValue(b, "async", "k99", 99);
        settle(a, "async");
        Jmx ja = cluster.jmx(a);
        Jmx jb = cluster.jmx(b);
        // a batch's events are counted when its apply ends, a moment after the cache shows the marker
        Await.until(() -> jb.cacheCount("async", "applied") == 101,
                () -> "applied on b: " + jb.cacheCount("async", "applied"));
        assertThat(jb.cacheCount("async", "sent")).as("b re-sent what it applied").isZero();
        assertThat(ja.cacheCount("async", "received")).as("a received its own events back").isZero();
    }

    @Test
    void anEventOfACacheThisNodeLacks_isCountedAndNotCreated() throws Exception {
        CacheManager b = node("b");
        // what a sender that has not heard b's membership yet would send (a peer that has, sends nothing)
        byte[] batch = EventCodec.singletonBatch(
                EventCodec.encodePut("onlyOnA", new Element("k", "v")));
        cluster.node(b).inbound().onEvents("test", ByteBuffer.wrap(batch));
        assertThat(cluster.jmx(b).managerCount("unknownCache")).isEqualTo(1);
        assertThat(b.getEhcache("onlyOnA")).isNull();
    }

    /** A value whose serialization throws an Error, as a deep object graph or a huge value does. */
    static final class ErrorOnWrite implements Serializable {
        private static final long serialVersionUID = 1L;

        private void writeObject(ObjectOutputStream out) {
            throw new StackOverflowError("a graph too deep to serialize");
        }
    }

    @Test
    void aValueThatCannotBeSerialized_evenByAnError_isStoredLocally_andCountedAsUnencodable() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        for (String cache : new String[] {"async", "sync"}) {
            cache(a, cache).put(new Element("bad", "old"));
            awaitValue(b, cache, "bad", "old");
            cache(a, cache).put(new Element("bad", new ErrorOnWrite()));
            assertThat(cache(a, cache).get("bad").getObjectValue()).isInstanceOf(ErrorOnWrite.class);
            assertThat(cluster.jmx(a).cacheCount(cache, "unencodable")).isEqualTo(1);
            // the peer must not keep serving the value the put replaced: it drops the key
            awaitAbsent(b, cache, "bad");
        }
    }

    /** A key whose class is not {@code Serializable}: stock replicators leave its element local. */
    static final class PlainKey {
        private final int id;

        PlainKey(int id) {
            this.id = id;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof PlainKey && ((PlainKey) o).id == id;
        }

        @Override
        public int hashCode() {
            return id;
        }
    }

    @Test
    void aKeyThatIsNotSerializable_staysLocal_andLeavesThePeersAlone_asWithStockEhcache() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        try (LogCapture log = LogCapture.start()) {
            for (String cache : new String[] {"async", "sync"}) {
                for (int i = 0; i < 3; i++) {
                    cache(a, cache).put(new Element("k" + i, "v" + i));
                }
                for (int i = 0; i < 3; i++) {
                    awaitValue(b, cache, "k" + i, "v" + i);
                }
                cache(a, cache).put(new Element(new PlainKey(1), "stays here"));
                settle(a, cache); // whatever a sent before its marker has reached b
                assertThat(cache(a, cache).getSize()).as("a: 3 puts, the plain key, the marker").isEqualTo(5);
                assertThat(cache(a, cache).get(new PlainKey(1)).getObjectValue()).isEqualTo("stays here");
                assertThat(cache(b, cache).getSize()).as("b: the 3 puts and the marker, none removed").isEqualTo(4);
                for (int i = 0; i < 3; i++) {
                    assertThat(cache(b, cache).get("k" + i).getObjectValue()).isEqualTo("v" + i);
                }
                assertThat(cluster.jmx(a).cacheCount(cache, "notReplicated")).isEqualTo(1);
                assertThat(cluster.jmx(a).cacheCount(cache, "unencodable")).isZero();
                // an update and a remove of that key: not replicated either, said no more
                cache(a, cache).put(new Element(new PlainKey(1), "still here"));
                cache(a, cache).remove(new PlainKey(1));
                settle(a, cache);
                assertThat(cache(b, cache).getSize()).isEqualTo(5); // the 3 puts and two markers
                assertThat(cluster.jmx(a).cacheCount(cache, "notReplicated")).isEqualTo(3);
                assertThat(log.lines("ehrelay: cache '" + cache + "' of CacheManager " + a.getName() + " has a key of "
                        + "class " + PlainKey.class.getName() + ", which is not Serializable")).hasSize(1);
                // a value that is not Serializable (its key is) still invalidates the key on the peers
                cache(a, cache).put(new Element("k0", new PlainKey(2)));
                awaitAbsent(b, cache, "k0");
                assertThat(cluster.jmx(a).cacheCount(cache, "unencodable")).isEqualTo(1);
                assertThat(cluster.jmx(a).cacheCount(cache, "notReplicated")).isEqualTo(3);
            }
            assertThat(cluster.jmx(a).managerCount("notReplicated")).isEqualTo(6);
            assertThat(log.lines("which is not Serializable")).as("one WARN per cache").hasSize(2);
        }
    }

    // ---- bootstrap -----------------------------------------------------------------------------------------

    @Test
    void lateJoiner_bootstrapsFullContentInChunks() {
        CacheManager a = node("a");
        int n = 2000;
        for (int i = 0; i < n; i++) {
            cache(a, "bootstrapped").put(new Element("k" + i, "value-" + i + "-" + "x".repeat(50)));
        }
        CacheManager c = node("c");
        // synchronous bootstrap: complete when the CacheManager constructor returns
        assertThat(cache(c, "bootstrapped").getSize()).isEqualTo(n);
        assertThat(cache(c, "bootstrapped").get("k1234").getObjectValue()).isEqualTo("value-1234-" + "x".repeat(50));
        assertThat(cluster.jmx(c).cacheCount("bootstrapped", "bootstraps")).isEqualTo(1);
        // and it takes part in replication afterwards
        cache(a, "bootstrapped").put(new Element("after", "join"));
        awaitValue(c, "bootstrapped", "after", "join");
    }

    @Test
    void aJoiner_whosePeersIncludeEmptyOnes_bootstrapsFromTheOneWithTheData() {
        CacheManager a = node("a");
        int n = 300;
        for (int i = 0; i < n; i++) {
            cache(a, "bootstrapped").put(new Element("k" + i, "v" + i));
        }
        // peers holding the cache but nothing in it, as one that started at the same moment does: cleared here
        // without telling anyone; a joiner that took the first answer found them empty once in every k + 1 joins
        CacheManager d = node("d");
        cache(d, "bootstrapped").removeAll(true);
        for (int j = 1; j <= 3; j++) {
            CacheManager c = node("c" + j);
            assertThat(cache(c, "bootstrapped").getSize()).as("joiner %d of 3, with %d empty peers beside a", j, j)
                    .isEqualTo(n);
            assertThat(cache(c, "bootstrapped").get("k7").getObjectValue()).isEqualTo("v7");
            cache(c, "bootstrapped").removeAll(true);
        }
    }

    @Test
    void lateJoiner_asyncBootstrapConverges() {
        CacheManager a = node("a");
        for (int i = 0; i < 500; i++) {
            cache(a, "bootstrappedAsync").put(new Element(i, i));
        }
        CacheManager c = node("c");
        Await.until(() -> cache(c, "bootstrappedAsync").getSize() == 500,
                () -> "bootstrapped " + cache(c, "bootstrappedAsync").getSize());
    }

    // ---- bounded queue -------------------------------------------------------------------------------------

    /** Blocks the receiving node's apply of one cache until released (the calling thread's own puts pass). */
    private static CountDownLatch stall(CacheManager receiver, String cacheName) {
        CountDownLatch release = new CountDownLatch(1);
        Thread writer = Thread.currentThread();
        cache(receiver, cacheName).getCacheEventNotificationService().registerListener(new CacheEventListenerAdapter() {
            @Override
            public void notifyElementPut(Ehcache cache, Element element) {
                if (Thread.currentThread() == writer) {
                    return;
                }
                try {
                    release.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        return release;
    }

    @Test
    void overflowDrop_countsEveryDropAndStaysWithinBound() {
        int maxEvents = 50;
        CacheManager a = node("a", "queueMaxEvents=" + maxEvents + ", overflowPolicy=drop, sendTimeoutMillis=60000");
        CacheManager b = node("b");
        CountDownLatch release = stall(b, "async");
        int n = fixture().overflowEventCount();
        byte[] value = new byte[fixture().overflowValueBytes()];
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            cache(a, "async").put(new Element(i, value));
        }
        long writeMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        Jmx ja = cluster.jmx(a);
        long dropped = ja.cacheCount("async", "dropped");
        System.out.printf("[%s] overflow run: %d puts of %d B in %d ms, dropped %d, queue high water %s events / %s "
                + "bytes (bound %d events)%n", fixture().transportName(), n, value.length, writeMillis, dropped,
                ja.managerGauge("queueHighWaterEvents"), ja.managerGauge("queueHighWaterBytes"), maxEvents);
        assertThat(dropped).as("events dropped by a full queue").isPositive();
        assertThat(ja.managerGauge("queueHighWaterEvents").longValue()).isLessThanOrEqualTo(maxEvents);
        assertThat(writeMillis).as("drop policy never blocks the writer for long").isLessThan(20_000);
        release.countDown();
        Await.until(() -> ja.managerCount("queueEvents") == 0, () -> "queue not drained");
        Await.until(() -> ja.cacheCount("async", "sent") + ja.cacheCount("async", "failed") + dropped == n,
                () -> "sent " + ja.cacheCount("async", "sent") + " + failed " + ja.cacheCount("async", "failed")
                        + " + dropped " + dropped + " != " + n);
        Jmx jb = cluster.jmx(b);
        // the batches after the drops carry the loss: b resynchronises from a and ends equal to it
        Await.until(() -> cache(b, "async").getSize() == n && jb.managerCount("resyncs") > 0,
                () -> "b holds " + cache(b, "async").getSize() + " of " + n + ", resyncs " + jb.managerCount("resyncs"));
        for (int i = 0; i < n; i += Math.max(1, n / 50)) {
            assertThat((byte[]) cache(b, "async").get(i).getObjectValue()).as("element %d on b", i).hasSize(value.length);
        }
        assertThat(jb.managerCount("resyncFailures")).isZero();
    }

    // ---- convergence: missed events are counted and repaired -------------------------------------------------

    /** Whether the two caches hold the same keys with equal values (byte arrays compared by content). */
    private static String difference(Ehcache x, Ehcache y) {
        Set<Object> kx = new HashSet<Object>(CacheKeys.of(x));
        Set<Object> ky = new HashSet<Object>(CacheKeys.of(y));
        if (!kx.equals(ky)) {
            Set<Object> onlyX = new HashSet<>(kx);
            onlyX.removeAll(ky);
            Set<Object> onlyY = new HashSet<>(ky);
            onlyY.removeAll(kx);
            return kx.size() + " vs " + ky.size() + " keys; only in first " + first(onlyX) + ", only in second "
                    + first(onlyY);
        }
        for (Object k : kx) {
            Element ex = x.getQuiet(k);
            Element ey = y.getQuiet(k);
            Object vx = ex == null ? null : ex.getObjectValue();
            Object vy = ey == null ? null : ey.getObjectValue();
            if (!Objects.deepEquals(vx, vy)) {
                return "key " + k + " differs";
            }
        }
        return null;
    }

    private static String first(Set<Object> keys) {
        return keys.stream().limit(5).map(String::valueOf).collect(Collectors.joining(",", "[",
                keys.size() > 5 ? ",…]" : "]"));
    }

    private static byte[] valueOf(int key, int version, int size) {
        byte[] v = new byte[size];
        Arrays.fill(v, (byte) (key * 31 + version));
        return v;
    }

    @Test
    void slowPeer_missedEventsAreCountedAndThePeerResyncsToEquality() {
        CacheManager a = node("a", "sendTimeoutMillis=300, queueMaxEvents=100, overflowPolicy=drop");
        CacheManager b = node("b");
        for (int i = 0; i < 50; i++) {
            cache(a, "async").put(new Element(i, valueOf(i, 0, 64)));
        }
        Await.until(() -> cache(b, "async").getSize() == 50, () -> "b has " + cache(b, "async").getSize());
        CountDownLatch release = stall(b, "async");
        Jmx ja = cluster.jmx(a);
        int size = fixture().overflowValueBytes();
        int version = 1;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        // b stops applying: a keeps writing (puts, updates, removes) until events for b fail or drop
        while (ja.cacheCount("async", "failed") + ja.cacheCount("async", "dropped") == 0 && System.nanoTime() < until) {
            for (int i = 0; i < 200; i++) {
                int key = 20 + (version * 200 + i) % 500;
                cache(a, "async").put(new Element(key, valueOf(key, version, size)));
                if (i % 10 == 0) {
                    cache(a, "async").remove(key - 7);
                }
            }
            version++;
        }
        long missed = ja.cacheCount("async", "failed") + ja.cacheCount("async", "dropped");
        assertThat(missed).as("events a could not deliver to b are counted").isPositive();
        release.countDown();
        cache(a, "async").put(new Element("after", valueOf(1, 1, 8)));
        Jmx jb = cluster.jmx(b);
        Await.until(() -> jb.managerCount("resyncs") + jb.managerCount("resyncFailures") > 0
                        && difference(cache(a, "async"), cache(b, "async")) == null,
                () -> "b differs from a: " + difference(cache(a, "async"), cache(b, "async")) + "; b resyncs "
                        + jb.managerCount("resyncs") + ", gaps " + jb.managerCount("gaps") + ", duplicates "
                        + jb.managerCount("duplicateBatches") + "; a failed " + ja.cacheCount("async", "failed")
                        + ", dropped " + ja.cacheCount("async", "dropped"));
        assertThat(jb.managerCount("resyncs")).as("b resynchronised").isPositive();
        assertThat(jb.managerCount("resyncFailures")).isZero();
        System.out.printf("[%s] slow peer: a counted %d events b missed (failed %d, dropped %d); b saw %d gaps, "
                + "resynced %d time(s); %d elements equal%n", fixture().transportName(), missed,
                ja.cacheCount("async", "failed"), ja.cacheCount("async", "dropped"), jb.managerCount("gaps"),
                jb.managerCount("resyncs"), cache(a, "async").getSize());
    }

    @Test
    void overflowBlock_pacesTheWriterWhileThePeerTakesEvents_andDropsNothing() {
        CacheManager a = node("a", "queueMaxEvents=10, overflowPolicy=block, overflowBlockMillis=30000");
        CacheManager b = node("b");
        byte[] value = new byte[fixture().overflowValueBytes()];
        int n = fixture().overflowEventCount();
        Jmx ja = cluster.jmx(a);
        for (int i = 0; i < n; i++) {
            cache(a, "async").put(new Element(i, value));
        }
        awaitValue(b, "async", n - 1, value);
        assertThat(ja.cacheCount("async", "dropped")).as("dropped").isZero();
        assertThat(ja.managerCount("overflowWaits")).as("overflowWaits: puts that waited for room").isPositive();
        assertThat(ja.managerGauge("overflowWaitMillis").longValue()).as("overflowWaitMillis").isNotNegative();
        assertThat(cache(b, "async").getSize()).isEqualTo(n);
    }

    @Test
    void overflowBlock_doesNotHoldTheWriterWhileThePeerTakesNothing() {
        CacheManager a = node("a", "queueMaxEvents=10, overflowPolicy=block, overflowBlockMillis=300, "
                + "sendTimeoutMillis=60000");
        CacheManager b = node("b");
        CountDownLatch release = stall(b, "async");
        byte[] value = new byte[fixture().overflowValueBytes()];
        int n = fixture().overflowEventCount();
        Jmx ja = cluster.jmx(a);
        cache(a, "async").put(new Element(-1, value));
        for (int i = 0; i < n && ja.cacheCount("async", "dropped") == 0; i++) {
            cache(a, "async").put(new Element(i, value));
        }
        assertThat(ja.cacheCount("async", "dropped")).as("dropped: the queue filled").isPositive();
        // the dispatcher is stuck on the stalled peer and takes nothing: a put drops at once instead of waiting
        // 300 ms for room that does not come (10 puts: 3 s if each waited)
        long t0 = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            cache(a, "async").put(new Element("more-" + i, value));
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        release.countDown();
        assertThat(ms).as("ms for 10 puts while nothing is taken").isLessThan(1500);
    }

    // ---- hostile values ------------------------------------------------------------------------------------

    @Test
    void classOutsideAllowList_isRejectedWithoutRunningReadObject() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(a, "async").put(new Element("gadget", new Gadget("boom")));
        cache(a, "async").put(new Element("after", "ok"));
        awaitValue(b, "async", "after", "ok");
        assertThat(cache(b, "async").get("gadget")).isNull();
        assertThat(Gadget.readObjectRan).as("Gadget.readObject ran on the receiver").isFalse();
        assertThat(cluster.jmx(b).cacheCount("async", "rejected")).isEqualTo(1);
    }

    // ---- Ehcache's replication API --------------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    private List<CachePeer> remotePeers(CacheManager cm, String cache) {
        return (List<CachePeer>) cm.getCacheManagerPeerProvider(fixture().scheme())
                .listRemoteCachePeers(cache(cm, cache));
    }

    /** Waits until {@code cm} lists {@code peers} remote peers for {@code cache}. */
    private void awaitListed(CacheManager cm, String cache, int peers) {
        Await.until(() -> remotePeers(cm, cache).size() == peers, () -> cm.getName() + " lists for " + cache + ": "
                + remotePeers(cm, cache) + ", expected " + peers + " peer(s)");
    }

    private static String nameOf(CachePeer p) {
        try {
            return p.getName();
        } catch (RemoteException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void listRemoteCachePeers_isACachePeerOfTheCache_perReachablePeer() throws Exception {
        CacheManager a = node("a");
        CacheManager b = node("b");
        awaitListed(a, "async", 1);
        CachePeer peer = remotePeers(a, "async").get(0);
        assertThat(peer.getName()).isEqualTo("async");
        assertThat(peer.getUrlBase()).contains(cluster.endpoint(b));
        assertThat(peer.getUrl()).isEqualTo(peer.getUrlBase() + "/async");
        assertThat(peer.getGuid()).isNotBlank();
        assertThatThrownBy(() -> peer.put(new Element("k", "v"))).isInstanceOf(RemoteException.class)
                .hasMessageContaining("ehrelay replicates through its own transport");
        assertThatThrownBy(peer::getKeys).isInstanceOf(RemoteException.class);
        assertThat(remotePeers(a, "sync").get(0).getName()).isEqualTo("sync");
    }

    @Test
    void aPeerThatStops_leavesListRemoteCachePeers() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        awaitListed(a, "async", 1);
        b.shutdown(); // not unregistered: a configured peer stays configured and is retried in the background
        Await.until(() -> {
            cache(a, "async").put(new Element("probe", System.nanoTime())); // a send finds out a silent peer
            return remotePeers(a, "async").isEmpty();
        }, () -> "still listed: " + remotePeers(a, "async"));
    }

    /**
     * A peer that stops says it leaves: anti-entropy no longer compares with it, so an operator's check names no
     * peer and nothing is counted in antiEntropyFailures, though the peer stays configured (a round that was
     * asking it as it stopped: {@code AntiEntropyTest}).
     */
    @Test
    void aPeerThatStops_isNoLongerCompared_andNoAntiEntropyFailureIsCounted() throws Exception {
        CacheManager a = node("a");
        CacheManager b = node("b");
        awaitListed(a, "async", 1);
        b.shutdown();
        ObjectName check = ObjectNames.of(ObjectNames.convergence(a.getName(), fixture().transportName()));
        Object[] report = new Object[1];
        Await.until(() -> {
            report[0] = checkNow(check);
            return "no peers".equals(report[0]);
        }, () -> "checkNow after the peer stopped: " + report[0]);
        assertThat(cluster.jmx(a).managerCount("antiEntropyFailures")).isZero();
    }

    private static Object checkNow(ObjectName convergence) {
        try {
            return ManagementFactory.getPlatformMBeanServer().invoke(convergence, "checkNow", new Object[0],
                    new String[0]);
        } catch (JMException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void boundCachePeers_arePerReplicatedCache_andActOnTheLocalCache() throws Exception {
        CacheManager a = node("a");
        CacheManagerPeerListener listener = a.getCachePeerListener(fixture().scheme());
        if (fixture().listenerFactory() == null) {
            // no peer listener in this transport's configuration (JGroups, as stock JGroups replication)
            assertThat(listener).isNull();
            return;
        }
        @SuppressWarnings("unchecked")
        List<CachePeer> bound = listener.getBoundCachePeers();
        assertThat(bound).extracting(ReplicationContractTest::nameOf)
                .contains("async", "sync", "invalidate", "noRemovals", "bootstrapped").doesNotHaveDuplicates();
        CachePeer async = bound.stream().filter(p -> nameOf(p).equals("async"))
                .findFirst().orElseThrow(AssertionError::new);
        assertThat(async.getUrl()).isEqualTo(async.getUrlBase() + "/async");
        assertThat(async.getUrlBase()).contains(cluster.endpoint(a));
        cache(a, "async").put(new Element("k", "v"));
        assertThat(CacheKeys.of(async)).containsExactly("k");
        assertThat(async.getQuiet("k").getObjectValue()).isEqualTo("v");
        assertThat(async.getGuid()).isEqualTo(cache(a, "async").getGuid());
    }

    /**
     * Stock Ehcache looks a manual peer up when {@code listRemoteCachePeers} is asked: right after a node starts,
     * a peer that is up is listed (a health check then does not say "no peers"), not only once the background
     * connection is up.
     */
    @Test
    void listRemoteCachePeers_rightAfterStart_listsAPeerThatIsUp() {
        Assumptions.assumeTrue(fixture().manualDiscovery(), "automatic discovery: found later");
        CacheManager b = node("b");
        CacheManager a = cluster.start("a", "", false);
        assertThat(remotePeers(a, "async")).as("peers listed at once").hasSize(1);
        assertThat(remotePeers(b, "async")).hasSize(1);
    }

    /**
     * Stock drops a peer that shut down from {@code listRemoteCachePeers} within its heartbeat stale time (or, with
     * manual discovery, at the next lookup); a node that stops cleanly tells its peers, which drop it at once.
     */
    @Test
    void aPeerThatShutsDown_isNoLongerListed_withinSeconds() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        awaitListed(b, "async", 1);
        long t0 = System.nanoTime();
        a.shutdown();
        Await.until(Duration.ofSeconds(10), () -> remotePeers(b, "async").isEmpty(),
                () -> "b still lists " + remotePeers(b, "async").size() + " peer(s) after a shut down");
        System.out.printf("[contract] %s: a stopped peer left listRemoteCachePeers after %d ms%n",
                fixture().scheme(), (System.nanoTime() - t0) / 1_000_000);
    }

    @Test
    void registerPeer_andUnregisterPeer_changeThePeersAtRunTime() {
        CacheManager a = node("a");
        CacheManagerPeerProvider provider = a.getCacheManagerPeerProvider(
                fixture().scheme());
        if (!fixture().manualDiscovery()) {
            // members find each other (JGroups' view): the calls are ignored, as stock JGroups replication does
            CacheManager b = node("b");
            provider.registerPeer("10.1.2.3[7800]");
            provider.unregisterPeer(cluster.endpoint(b));
            assertThat(cluster.node(a).peers()).extracting(Peer::endpoint)
                    .containsExactly(cluster.endpoint(b));
            return;
        }
        assertThatThrownBy(() -> provider.registerPeer("no peer here")).isInstanceOf(CacheException.class)
                .hasMessageContaining("cannot register peer 'no peer here'");
        CacheManager b = node("b"); // registered on a at run time by the suite
        cache(a, "async").put(new Element("k1", "v"));
        awaitValue(b, "async", "k1", "v");
        provider.unregisterPeer(cluster.endpoint(b));
        assertThat(cluster.node(a).peers()).isEmpty();
        assertThat(remotePeers(a, "async")).isEmpty();
        cache(a, "async").put(new Element("k2", "v"));
        provider.registerPeer(cluster.endpoint(b));
        awaitListed(a, "async", 1);
        cache(a, "async").put(new Element("k3", "v"));
        awaitValue(b, "async", "k3", "v");
        // written while b was not a peer: the gap in a's batch numbers makes b resynchronise from a
        awaitValue(b, "async", "k2", "v");
    }

    @Test
    void aCacheThePeerNeverHad_isNotListedForIt_onceItWasSentAnEvent() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        awaitListed(a, "async", 1);
        a.addCache("onlyOnA"); // from defaultCache: replicated here, absent on b
        // b has not named its caches yet (it would while still creating them at start-up): the first event
        // goes to b, which drops it, counts it, and tells a what it holds
        cache(a, "onlyOnA").put(new Element("first", "v"));
        Jmx jb = cluster.jmx(b);
        Await.until(() -> jb.managerCount("unknownCache") == 1, () -> "unknownCache " + jb.managerCount("unknownCache"));
        awaitListed(a, "onlyOnA", 0);
        assertThat(remotePeers(a, "async")).as("the caches b has keep their peer").hasSize(1);
        assertThat(b.getEhcache("onlyOnA")).as("not created on b").isNull();
        // b may yet create the cache (Hibernate creates regions after start-up): its events are still sent, and
        // once b has the cache they are applied
        b.addCache("onlyOnA");
        cache(a, "onlyOnA").put(new Element("later", "v2"));
        awaitValue(b, "onlyOnA", "later", "v2");
    }

    @Test
    void aCacheThePeerRemoved_isNoLongerSentOrListed_untilItIsAddedAgain() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        awaitListed(a, "expiring", 1);
        cache(a, "expiring").put(new Element("before", "v"));
        awaitValue(b, "expiring", "before", "v");
        b.removeCache("expiring");
        awaitListed(a, "expiring", 0);
        assertThat(remotePeers(a, "async")).as("the other caches keep their peer").hasSize(1);
        if (fixture().listenerFactory() != null) {
            List<CachePeer> bound = boundPeers(b);
            assertThat(bound).extracting(ReplicationContractTest::nameOf).contains("async")
                    .doesNotContain("expiring");
        }
        long sentBefore = cluster.jmx(a).cacheCount("expiring", "sent");
        cache(a, "expiring").put(new Element("while-removed", "v"));
        settle(a, "async");
        Await.until(() -> cluster.jmx(a).cacheCount("expiring", "enqueued") == 2, () -> "not queued yet");
        assertThat(cluster.jmx(a).cacheCount("expiring", "sent") - sentBefore).isZero();
        assertThat(cluster.jmx(b).managerCount("unknownCache")).isZero();

        Jmx jb = cluster.jmx(b);
        long receivedBefore = jb.cacheCount("expiring", "received");
        b.addCache("expiring"); // back (from defaultCache, replicated): a sends its events again
        awaitListed(a, "expiring", 1);
        // b was not sent what a changed while b lacked the cache: a clears b's copy (one removeAll to b alone),
        // so whatever b loaded itself in the meantime is not served in place of a's change
        Await.until(() -> jb.cacheCount("expiring", "received") == receivedBefore + 1,
                () -> "no clearing received: " + jb.cacheCount("expiring", "received"));
        cache(a, "expiring").put(new Element("after", "v2"));
        awaitValue(b, "expiring", "after", "v2");
    }

    @SuppressWarnings("unchecked")
    private List<CachePeer> boundPeers(CacheManager cm) {
        return cm.getCachePeerListener(fixture().scheme()).getBoundCachePeers();
    }

    // ---- secure by default ------------------------------------------------------------------------------------

    @Test
    void aHostThatUnauthenticatedPeersDoesNotAdmit_isRefused_counted_andChangesNothing() throws Exception {
        CacheManager a = node("a");
        // 192.0.2.1 (TEST-NET) only: this host, where a runs, is not admitted by b
        CacheManager b = cluster.start("b", "unauthenticatedPeers=192.0.2.1", false);
        started.add(b);
        Jmx jb = cluster.jmx(b);
        Await.until(() -> {
            cache(a, "async").put(new Element("k", "v")); // a retries; every attempt is refused
            return jb.managerCount("unauthorized") > 0;
        }, () -> "nothing refused");
        long refused = jb.managerCount("unauthorized");
        Await.until(() -> {
            cache(a, "async").put(new Element("k", "v"));
            return jb.managerCount("unauthorized") >= refused + 3;
        }, () -> "later attempts not refused");
        assertThat(cache(b, "async").get("k")).as("applied on b").isNull();
        assertThat(jb.cacheCount("async", "received")).isZero();
        cluster.stop(b);
        started.remove(b);
        CacheManager c = node("c"); // the default admits this host
        cache(a, "async").put(new Element("k2", "v2"));
        awaitValue(c, "async", "k2", "v2");
        assertThat(cluster.jmx(c).managerCount("unauthorized")).isZero();
    }

    // ---- never stale: an event a node cannot apply invalidates what it would have changed ------------------

    @Test
    void aValueTheReceiverRefuses_removesItsOldCopy_soItIsNeverServed() {
        CacheManager a = node("a", "allowedClasses=io.ehrelay.contract.AllowedValue");
        CacheManager b = node("b");
        cache(a, "async").put(new Element("k", "old"));
        awaitValue(b, "async", "k", "old");
        cache(a, "async").put(new Element("k", new AllowedValue("new", 1)));
        awaitAbsent(b, "async", "k");
        Jmx jb = cluster.jmx(b);
        assertThat(jb.cacheCount("async", "invalidated")).isEqualTo(1);
        assertThat(jb.cacheCount("async", "rejected")).isEqualTo(1);
        assertThat(jb.cacheCount("async", "applied")).as("the invalidation is not an applied event").isEqualTo(1);
        cache(a, "async").put(new Element("after", "ok"));
        awaitValue(b, "async", "after", "ok");
        assertThat(cache(a, "async").get("k").getObjectValue()).as("the writer keeps its value")
                .isEqualTo(new AllowedValue("new", 1));
    }

    @Test
    void aKeyTheReceiverRefuses_changesNothingElseThere_andIsCounted() {
        CacheManager a = node("a", "allowedClasses=io.ehrelay.contract.AllowedValue");
        CacheManager b = node("b");
        cache(a, "async").put(new Element("x", "1"));
        awaitValue(b, "async", "x", "1");
        cache(b, "async").putQuiet(new Element("local", "only on b"));
        // not even the key decodes on b: b never held that key (it cannot), so nothing else is touched
        cache(a, "async").put(new Element(new AllowedValue("key", 7), "v"));
        Await.until(() -> cluster.jmx(b).cacheCount("async", "rejected") == 1, () -> "not counted on b");
        cache(a, "async").put(new Element("after", "ok"));
        awaitValue(b, "async", "after", "ok");
        assertThat(cache(b, "async").get("x")).as("no whole-cache clear").isNotNull();
        assertThat(cache(b, "async").get("local")).isNotNull();
        assertThat(cluster.jmx(b).cacheCount("async", "invalidated")).as("no key of b matched").isZero();
    }

    @Test
    void aWriteWhoseKeyTheReceiverRefuses_invalidatesThatKeyWhereItWasWritten_andNothingElse() {
        CacheManager a = node("a", "allowedClasses=io.ehrelay.contract.AllowedValue");
        CacheManager b = node("b");
        AllowedValue key = new AllowedValue("key", 8);
        // b's application wrote the key (its own class, which b's allow-list does not admit from peers)
        cache(b, "invalidate").put(new Element(key, "stale"));
        cache(b, "invalidate").put(new Element("other", "stays"));
        // a's write comes after b's (a saw them): the newer one
        Await.until(() -> cluster.jmx(a).cacheCount("invalidate", "received") >= 2, () -> "a did not hear b");
        cache(a, "invalidate").put(new Element(key, "fresh"));
        Await.until(() -> !cache(b, "invalidate").isKeyInCache(key),
                () -> "b still holds " + cache(b, "invalidate").getKeys());
        assertThat(cache(b, "invalidate").get("other")).as("only that key").isNotNull();
        assertThat(cluster.jmx(b).cacheCount("invalidate", "invalidated")).isEqualTo(1);
    }

    @Test
    void allowedClassesProperty_admitsApplicationClasses() {
        CacheManager a = node("a");
        CacheManager b = node("b", "allowedClasses=io.ehrelay.contract.AllowedValue");
        cache(a, "async").put(new Element("k", new AllowedValue("x", 3)));
        awaitValue(b, "async", "k", new AllowedValue("x", 3));
        assertThat(cluster.jmx(b).cacheCount("async", "rejected")).isZero();
    }

    // ---- convergence ---------------------------------------------------------------------------------------

    /**
     * Every node counted each received write once: applied, or discarded as older (conflict or stale). The
     * contents can be equal while the last writes, older ones that change nothing, are still being applied, so
     * the counters are awaited; a write received and never counted keeps them apart and fails.
     */
    private void assertAccounted(CacheManager cm, String cache) {
        Jmx j = cluster.jmx(cm);
        Await.untilEqual(() -> j.cacheCount(cache, "received"),
                () -> j.cacheCount(cache, "applied") + j.cacheCount(cache, "conflictsLocalWon")
                        + j.cacheCount(cache, "staleDiscarded") + j.cacheCount(cache, "invalidated"),
                (received, accounted) -> String.format("%s: received %d but applied + conflictsLocalWon + "
                        + "staleDiscarded + invalidated %d", cm.getName(), received, accounted));
    }

    private List<Ehcache> caches(String name, CacheManager... cms) {
        List<Ehcache> out = new ArrayList<>();
        for (CacheManager cm : cms) {
            out.add(cache(cm, name));
        }
        return out;
    }

    @Test
    void concurrentWritersOnTwoNodes_putsRemovesAndARemoveAll_endWithTheSameEntries_byOrderAlone()
            throws Exception {
        CacheManager a = node("a", "antiEntropyIntervalMillis=0");
        CacheManager b = node("b", "antiEntropyIntervalMillis=0");
        List<Ehcache> caches = caches("async", a, b);
        ConvergenceWorkload.Result r = ConvergenceWorkload.run(caches, 100, 1200, 2, 3000, 0.3, true,
                System.nanoTime());
        ConvergenceWorkload.awaitEqual(caches, Duration.ofSeconds(20));
        assertThat(r.puts).isGreaterThan(1000);
        for (CacheManager cm : List.of(a, b)) {
            assertAccounted(cm, "async");
            assertThat(cluster.jmx(cm).cacheCount("async", "keysRepaired")).as("nothing to repair").isZero();
        }
        // every event each node sent has arrived at the other: nothing is left in flight to cross the contents
        Jmx ja = cluster.jmx(a);
        Jmx jb = cluster.jmx(b);
        Await.untilEqual(() -> ja.cacheCount("async", "sent"), () -> jb.cacheCount("async", "received"),
                (sent, received) -> "a sent " + sent + ", b received " + received);
        Await.untilEqual(() -> jb.cacheCount("async", "sent"), () -> ja.cacheCount("async", "received"),
                (sent, received) -> "b sent " + sent + ", a received " + received);
        assertThat(ConvergenceWorkload.differing(caches)).isEmpty();
    }

    @Test
    void concurrentWritersOnThreeNodes_endWithTheSameEntries_andInvalidatedCachesNeverDisagree()
            throws Exception {
        CacheManager a = node("a", "antiEntropyIntervalMillis=0");
        CacheManager b = node("b", "antiEntropyIntervalMillis=0");
        CacheManager c = node("c", "antiEntropyIntervalMillis=0");
        List<Ehcache> copies = caches("async", a, b, c);
        List<Ehcache> invalidated = caches("invalidate", a, b, c);
        Thread other = new Thread(() -> {
            try {
                ConvergenceWorkload.run(invalidated, 50, 1000, 1, 1000, 0.2, false, 7);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        other.start();
        ConvergenceWorkload.run(copies, 100, 1000, 1, 2000, 0.2, false, System.nanoTime());
        other.join();
        ConvergenceWorkload.awaitEqual(copies, Duration.ofSeconds(20));
        for (CacheManager cm : List.of(a, b, c)) {
            assertAccounted(cm, "async");
        }
        // replicated as invalidations, a key is held by its newest writer at most: never two values
        Await.until(() -> {
            for (String key : ConvergenceWorkload.contents(invalidated.get(0)).keySet()) {
                Object v = invalidated.get(0).get(key) == null ? null : invalidated.get(0).get(key).getObjectValue();
                for (Ehcache other2 : invalidated) {
                    Element e = other2.get(key);
                    if (e != null && v != null && !e.getObjectValue().equals(v)) {
                        return false;
                    }
                }
            }
            return true;
        }, () -> "two nodes hold different values of a key in an invalidated cache");
    }

    @Test
    void aDivergenceReport_namesEveryNodesCounters() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(a, "async").put(new Element("k", "v"));
        settle(a, "async");
        // the writer counts a cache's events as sent once the peer took the batch, and the reader as applied once the
        // batch is through: both a moment after the marker is in the reader's cache
        Await.until(() -> cluster.jmx(a).cacheCount("async", "sent") == 2
                && cluster.jmx(b).cacheCount("async", "applied") == 2, () -> "sends or applies not counted yet");
        String report = ConvergenceWorkload.nodeCounters(caches("async", a, b));
        // what a failing convergence check prints beside the differing keys: each node, and what it counted
        assertThat(report).contains(a.getName() + ":").contains(b.getName() + ":");
        assertThat(report.substring(report.indexOf(a.getName() + ":"), report.indexOf(b.getName() + ":")))
                .contains("cache.sent=2");
        assertThat(report.substring(report.indexOf(b.getName() + ":"))).contains("cache.applied=2");
    }

    @Test
    void antiEntropy_repairsWhatOneNodeNeverHeard_andTheOtherWroteMeanwhile_toTheNewestWrite() throws Exception {
        CacheManager a = node("a", "antiEntropyIntervalMillis=300, tombstoneRetentionMillis=60000");
        CacheManager b = node("b", "antiEntropyIntervalMillis=300, tombstoneRetentionMillis=60000");
        for (int i = 0; i < 50; i++) {
            cache(a, "async").put(new Element("k" + i, "v" + i));
        }
        settle(a, "async");
        long now = System.currentTimeMillis() << 16;
        // a peer that wrote to b and vanished before a heard: new keys, an update, a remove
        cluster.injectFromVanishedPeer(b, "async", "only-b", "x", now + 1);
        cluster.injectFromVanishedPeer(b, "async", "k1", "newer", now + 2);
        cluster.injectFromVanishedPeer(b, "async", "k2", null, now + 3);
        // and one that wrote to a, crossed with b's older write of the same key
        cluster.injectFromVanishedPeer(a, "async", "k3", "a-newer", now + 5);
        cluster.injectFromVanishedPeer(b, "async", "k3", "b-older", now + 4);
        assertThat(ConvergenceWorkload.differing(caches("async", a, b))).hasSizeGreaterThanOrEqualTo(4);
        ConvergenceWorkload.awaitEqual(caches("async", a, b), Duration.ofSeconds(20));
        assertThat(cache(a, "async").get("k1").getObjectValue()).isEqualTo("newer");
        assertThat(cache(a, "async").get("k2")).isNull();
        assertThat(cache(b, "async").get("k3").getObjectValue()).isEqualTo("a-newer");
        assertThat(cache(a, "async").get("only-b").getObjectValue()).isEqualTo("x");
        // a round counts its repairs once it has fetched all it asked for: the caches may agree a moment before
        Await.until(() -> cluster.jmx(a).cacheCount("async", "keysRepaired") >= 3
                && cluster.jmx(b).cacheCount("async", "keysRepaired") >= 1, () -> "repairs not counted: a "
                + cluster.jmx(a).cacheCount("async", "keysRepaired") + ", b "
                + cluster.jmx(b).cacheCount("async", "keysRepaired"));
        assertThat(cluster.jmx(a).cacheCount("async", "keysRepaired")).isEqualTo(3);
        assertThat(cluster.jmx(b).cacheCount("async", "keysRepaired")).isEqualTo(1);
        Await.until(() -> cluster.jmx(a).managerCount("antiEntropyRounds") > 0, () -> "no round counted");
        // an operator's check over JMX: nothing differs now, and it says so per peer
        ObjectName check = ObjectNames.of(
                ObjectNames.convergence(a.getName(), fixture().transportName()));
        Object report = ManagementFactory.getPlatformMBeanServer().invoke(check, "checkNow",
                new Object[0], new String[0]);
        assertThat(report).asString().matches("\\S+=0");
        assertThat(Jmx.attribute(check, "DifferingKeys")).isEqualTo(0L);
        assertThat(Jmx.attribute(check, "LastAgreement").toString()).doesNotContain("never");
        assertThat(cluster.jmx(a).cacheCount("async", "antiEntropyMismatches")).isPositive();
    }

    // ---- metrics -------------------------------------------------------------------------------------------

    @Test
    void jmxMetrics_matchWhatWasDone() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        int n = 500;
        for (int i = 0; i < n; i++) {
            cache(a, "async").put(new Element(i, new byte[100]));
        }
        Jmx ja = cluster.jmx(a);
        Jmx jb = cluster.jmx(b);
        Await.until(() -> jb.cacheCount("async", "applied") == n, () -> "applied " + jb.cacheCount("async", "applied"));
        Await.until(() -> ja.cacheCount("async", "sent") == n, () -> "sent " + ja.cacheCount("async", "sent"));
        assertThat(ja.cacheCount("async", "enqueued")).isEqualTo(n);
        assertThat(ja.cacheCount("async", "queueEvents")).isZero();
        assertThat(ja.cacheCount("async", "queueBytes")).isZero();
        assertThat(ja.managerCount("queueEvents")).isZero();
        assertThat(ja.cacheCount("async", "dropped")).isZero();
        assertThat(ja.cacheCount("async", "failed")).isZero();
        assertThat(ja.cacheCount("async", "sendLatency")).isEqualTo(n);
        assertThat(((Number) Jmx.attribute(ja.cacheName("async", "sendLatency"), "99thPercentile")).doubleValue())
                .isPositive();
        assertThat(jb.cacheCount("async", "received")).isEqualTo(n);
        assertThat(jb.cacheCount("async", "applyLatency")).isEqualTo(n);
        assertThat(ja.cacheCount("async", "bytesSent")).isGreaterThan(100L * n);
        assertThat(jb.managerCount("bytesReceived")).isGreaterThan(100L * n);
        assertThat(ja.managerGauge("peersKnown").intValue()).isEqualTo(1);
        assertThat(ja.managerGauge("peersReachable").intValue()).isEqualTo(1);
        assertThat(ja.cacheGauge("async", "threadsPerRegion").intValue()).isBetween(1, 4);
        assertThat(jb.cacheGauge("async", "threadsPerRegion").intValue()).isBetween(1, 4);
        assertThat(ja.managerGauge("threads").intValue()).isPositive();
        assertThat(cluster.node(a).metrics().registry()).isSameAs(Ehrelay.metricRegistry(a));
    }

    // ---- threads and lifecycle -----------------------------------------------------------------------------

    private static List<String> ehrelayThreadsOf(CacheManager cm) {
        List<String> names = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith(NodeThreads.PREFIX) && t.getName().contains("-" + cm.getName() + "-")) {
                names.add(t.getName());
            }
        }
        Collections.sort(names);
        return names;
    }

    /** Steady-state threads: without the bootstrap thread, which ends by itself when idle. */
    private static List<String> steadyThreadsOf(CacheManager cm) {
        List<String> names = ehrelayThreadsOf(cm);
        // on-demand threads that end when idle (one each at most): the bootstrap/resync thread, and the
        // transport's retry thread (started when a peer says hello before this node's channel to it is up)
        names.removeIf(n -> n.contains("-bootstrap-") || n.contains("-lookup-"));
        return names;
    }

    @Test
    void threads_doNotGrowWithTheNumberOfCaches() {
        CacheManager one = node("one");
        CacheManager many = node("many");
        CacheManager sink = node("sink");
        // every node talks to every other, so that each holds the same connections
        for (CacheManager cm : List.of(one, many, sink)) {
            cache(cm, "async").put(new Element(cm.getName(), "hello"));
        }
        for (CacheManager cm : List.of(one, many, sink)) {
            for (CacheManager other : List.of(one, many, sink)) {
                awaitValue(cm, "async", other.getName(), "hello");
            }
        }
        one.addCache("region-0");
        for (int i = 0; i < 1000; i++) {
            sink.addCache("region-" + i); // a node that holds every region, so that many sends to all of them
        }
        one.getEhcache("region-0").put(new Element("k", "v"));
        for (int i = 0; i < 1000; i++) {
            many.addCache("region-" + i);
            many.getEhcache("region-" + i).put(new Element("k", "v"));
        }
        Jmx jm = cluster.jmx(many);
        for (int i = 0; i < 1000; i++) {
            awaitValue(sink, "region-" + i, "k", "v");
        }
        // pool threads that serve a request or send a batch come and go (CI run 43 caught one node with a second
        // sender and a fifth HTTP thread for a moment): the two nodes are compared once both are at rest
        Await.until(() -> steadyThreadsOf(many).size() <= steadyThreadsOf(one).size(),
                () -> "ehrelay threads with 1,000 caches " + steadyThreadsOf(many) + " vs 1 cache "
                        + steadyThreadsOf(one));
        List<String> threadsOne = steadyThreadsOf(one);
        List<String> threadsMany = steadyThreadsOf(many);
        System.out.printf("[%s] ehrelay threads: 1 cache -> %d %s, 1000 caches -> %d %s; live JVM threads %d%n",
                fixture().transportName(), threadsOne.size(), threadsOne, threadsMany.size(), threadsMany,
                Thread.activeCount());
        assertThat(threadsMany.size()).as("ehrelay threads with 1,000 caches %s vs 1 cache %s", threadsMany,
                threadsOne).isLessThanOrEqualTo(threadsOne.size());
        // the gauge and the JVM's list are read one after the other: a short-lived thread (a TLS handshake, a
        // lookup) may start or end between the two reads, so they are compared until one pair agrees
        Await.untilEqual(() -> jm.managerGauge("threads").intValue(), () -> ehrelayThreadsOf(many).size(),
                (gauge, listed) -> "threads gauge " + gauge + ", ehrelay threads in the JVM " + listed);
        for (int i = 0; i < 1000; i += 111) {
            assertThat(jm.cacheGauge("region-" + i, "threadsPerRegion").intValue()).isBetween(1, threadsMany.size());
        }
    }

    @Test
    void shutdown_leavesNoThreadsAndNoMBeans() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        cache(a, "async").put(new Element("k", "v"));
        awaitValue(b, "async", "k", "v");
        assertThat(ehrelayThreadsOf(a)).isNotEmpty();
        String name = a.getName();
        cluster.stop(a);
        Await.until(Duration.ofSeconds(10), () -> ehrelayThreadsOf(a).isEmpty(), () -> "left " + ehrelayThreadsOf(a));
        assertThat(Jmx.query("io.ehrelay:cacheManager=" + name + ",*")).isEmpty();
        assertThat(Jmx.query("io.ehrelay:cacheManager=" + b.getName() + ",*")).isNotEmpty();
    }

    /** Names of this JVM's live ehrelay threads. */
    private static List<String> ehrelayThreads() {
        List<String> names = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith(NodeThreads.PREFIX)) {
                names.add(t.getName());
            }
        }
        return names;
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static CacheManager construct(String xml) {
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    /** Whether a listening socket can be opened on {@code port} of 127.0.0.1 now. */
    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Ehcache disposes a peer provider only in {@code CacheManager.shutdown()}, and forgets a CacheManager whose
     * constructor throws: a cache that fails to be created after the node started (its factory class misspelt,
     * its replicator badly configured) must not leave the node's threads running and its port bound, so that the
     * corrected configuration can start in the same JVM — after the failure (round 0) and right away (round 1).
     */
    @Test
    void aCacheManagerThatFailsToConstruct_leavesNoThreads_andItsPortToTheNextOne() throws Exception {
        Assumptions.assumeTrue(fixture().listenerFactory() != null && fixture().manualDiscovery(),
                "the transport's listener is not a port of its own (JGroups: the stack's)");
        int port = freeLoopbackPort();
        ContractCluster fixed = new ContractCluster(fixture().withListenerProperties(
                fixture().listenerProperties().replace("port=0", "port=" + port)));
        String misspelt = fixture().replicatorFactory().replace("ReplicatorFactory", "ReplicatorFactroy");
        String[] badCaches = {
            "<cache name=\"misspelt\" maxEntriesLocalHeap=\"10\">\n"
                + "  <cacheEventListenerFactory class=\"" + misspelt + "\"/>\n</cache>\n",
            "<cache name=\"badProperty\" maxEntriesLocalHeap=\"10\">\n"
                + "  <cacheEventListenerFactory class=\"" + fixture().replicatorFactory()
                + "\" properties=\"replicatePuts=yes\"/>\n</cache>\n"};
        String[] failures = {misspelt, "replicatePuts"};
        List<String> before = ehrelayThreads();
        for (int round = 0; round < 2; round++) {
            String failedName = ContractCluster.uniqueName("failed");
            String bad = fixed.nodeXml(failedName, "").replace("</ehcache>", badCaches[round] + "</ehcache>");
            assertThatThrownBy(() -> construct(bad)).isInstanceOf(CacheException.class)
                    .hasStackTraceContaining(failures[round]);
            if (round == 0) {
                Await.until(Duration.ofSeconds(20), () -> before.containsAll(ehrelayThreads()),
                        () -> "ehrelay threads left after a failed construction: " + ehrelayThreads()
                                + " (before it: " + before + ")");
            } else {
                // at once: the port is released (the JDK's RMI may close a listening socket a moment after the
                // last object on it was unexported, on its own thread)
                Await.until(Duration.ofSeconds(10), () -> bindable(port), () -> "port " + port + " still held");
            }
            CacheManager ok = construct(fixed.nodeXml(ContractCluster.uniqueName("retry"), ""));
            try {
                assertThat(fixed.node(ok).isAlive()).isTrue();
                String endpoint = fixed.endpoint(ok);
                if (!endpoint.startsWith("loopback:")) {
                    assertThat(endpoint).as("round %d", round).contains(":" + port);
                }
            } finally {
                ok.shutdown();
            }
            Await.until(Duration.ofSeconds(20), () -> ehrelayThreads().stream()
                    .noneMatch(n -> n.contains("-" + failedName + "-")), () -> "left " + ehrelayThreads());
            assertThat(Jmx.query("io.ehrelay:cacheManager=" + failedName + ",*")).isEmpty();
        }
        Await.until(Duration.ofSeconds(20), () -> before.containsAll(ehrelayThreads()),
                () -> "ehrelay threads left: " + ehrelayThreads() + " (before: " + before + ")");
    }

    @Test
    void shutdown_drainsQueuedEvents() {
        CacheManager a = node("a");
        CacheManager b = node("b");
        int n = 3000;
        for (int i = 0; i < n; i++) {
            cache(a, "async").put(new Element(i, new byte[200]));
        }
        cluster.stop(a);
        // shutdown returned after the queue drained into the transport: every element arrives, none is dropped
        Await.until(() -> cache(b, "async").getSize() == n, () -> "b has " + cache(b, "async").getSize() + " of " + n);
    }

    // ---- configuration -------------------------------------------------------------------------------------

    @Test
    void unknownProviderProperty_failsNamingIt() {
        assertThatThrownBy(() -> cluster.start("bad", "queueMaxEvent=10"))
                .hasStackTraceContaining("queueMaxEvent");
    }

    @Test
    void malformedProviderProperty_failsNamingPropertyAndValue() {
        assertThatThrownBy(() -> cluster.start("bad", "queueMaxBytes=lots"))
                .hasStackTraceContaining("queueMaxBytes")
                .hasStackTraceContaining("lots");
    }

    @Test
    void byteSizes_acceptSuffixes() {
        CacheManager a = node("a", "queueMaxBytes=2m, batchMaxBytes=256k");
        assertThat(cluster.node(a).config().queueMaxBytes()).isEqualTo(2L << 20);
        assertThat(cluster.node(a).config().batchMaxBytes()).isEqualTo(256 << 10);
    }
}
