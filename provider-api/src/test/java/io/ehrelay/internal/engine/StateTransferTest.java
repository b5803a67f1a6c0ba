package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.spi.Transport;
import io.ehrelay.testing.CacheKeys;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.event.CacheEventListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Serving a cache's state and loading it, between two real CacheManagers: node A serves (its cursor pages the
 * cache, its tombstones and its last removeAll), node B fetches through a transport that hands it A's chunks.
 */
class StateTransferTest {

    private static final Peer A = new Peer("a:1");

    private final Node a = new Node();
    private final Node b = new Node();
    /** The chunks A served for the last request. */
    private final List<byte[]> served = new ArrayList<>();

    /** One node's pieces: a CacheManager with caches "a" and "b", its bindings, ordering and state transfer. */
    private final class Node {
        final EngineTestKit kit = new EngineTestKit();
        final Transport transport = mock(Transport.class);
        final CacheBindings caches = new CacheBindings(kit.cacheManager, kit.metrics, (CacheEventListener l) -> false);
        final Ordering ordering = new Ordering(Clock.SYSTEM, 600_000, kit.warn);
        final StateTransfer st = new StateTransfer(kit.cacheManager.getName(), caches, transport, kit.metrics,
                kit.config.limits(), () -> List.of(A), () -> null,
                new Invalidations(kit.metrics, kit.config.limits().allowList(), kit.warn), () -> false,
                Executors.defaultThreadFactory(), kit.warn, Clock.SYSTEM, ordering,
                new Membership(kit.cacheManager.getName(), transport, caches::liveReplicatedCaches, Clock.SYSTEM));
        final Ehcache cache = kit.cacheManager.getEhcache("a");
        final CacheBinding binding = caches.bind("a");

        /** An application's put, as the replicator stamps it. */
        void put(Object key, Object value) throws IOException {
            Element e = new Element(key, value);
            cache.put(e);
            ordering.localPut(binding, cache, key, e, EventCodec.hashOf(key), EventCodec.hashOf(value));
        }

        void remove(Object key) throws IOException {
            cache.remove(key);
            ordering.localRemove(binding, cache, key, EventCodec.hashOf(key));
        }
    }

    StateTransferTest() {
        // B's transport asks A: A's cursor pages its cache into chunks, handed to B's sink in order
        when(b.transport.requestState(any(), anyString(), anyInt(), any())).then(inv -> {
            int max = inv.getArgument(2);
            InboundHandler.ChunkSink sink = inv.getArgument(3);
            InboundHandler.StateCursor cursor = a.st.open(inv.getArgument(1));
            served.clear();
            try {
                for (byte[] chunk = cursor.next(max); chunk != null; chunk = cursor.next(max)) {
                    served.add(chunk);
                    sink.accept(chunk);
                }
                return CompletableFuture.completedFuture(null);
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        });
    }

    @AfterEach
    void close() {
        a.kit.close();
        b.kit.close();
    }

    private Throwable fetch(int maxChunkBytes, AtomicLong loaded) throws InterruptedException {
        return b.st.fetch(A, b.cache, maxChunkBytes, 10_000, loaded);
    }

    @Test
    void aPagedTransfer_bringsEveryEntry_andEachKeyKeepsItsNewestWrite() throws Exception {
        b.put("k7", "b-older"); // written on B before A's writes: A's remove of it is newer
        Thread.sleep(2); // the stamps' milliseconds differ (they order writes of different nodes)
        for (int i = 0; i < 50; i++) {
            a.put("k" + i, "a-" + i);
        }
        a.remove("k7");
        Thread.sleep(2);
        b.put("k3", "b-newer"); // written on B after A's: B keeps it

        AtomicLong loaded = new AtomicLong();
        assertThat(fetch(300, loaded)).isNull();

        assertThat(served).as("paged in chunks of about 300 bytes").hasSizeGreaterThan(5);
        assertThat(loaded).as("50 entries: 49 values and the tombstone").hasValue(50);
        for (int i = 0; i < 50; i++) {
            Element e = b.cache.get("k" + i);
            if (i == 7) {
                assertThat(e).as("A's remove is newer than B's put").isNull();
            } else if (i == 3) {
                assertThat(e.getObjectValue()).isEqualTo("b-newer");
            } else {
                assertThat(e.getObjectValue()).isEqualTo("a-" + i);
            }
        }
        assertThat(b.binding.versions.get("k7").removed).as("the tombstone travelled").isTrue();
    }

    @Test
    void aRemoveAll_travelsFirst_soThatOlderEntriesGoAndNewerOnesStay() throws Exception {
        b.put("before", "b");
        Thread.sleep(2);
        a.put("gone", "a");
        a.ordering.localClear(a.binding, a.cache);
        a.put("after", "a");

        assertThat(fetch(1 << 16, new AtomicLong())).isNull();

        assertThat(CacheKeys.of(b.cache)).containsExactly("after");
        assertThat(b.binding.versions.cleared()).isNotNull();
    }

    @Test
    void anElementThatCannotBeEncoded_isSkipped_andCounted() throws Exception {
        a.put("fine", "v");
        a.cache.put(new Element("odd", new Object())); // not serializable: written before replication, no version

        assertThat(fetch(1 << 16, new AtomicLong())).isNull();

        assertThat(CacheKeys.of(b.cache)).containsExactly("fine");
        assertThat(a.kit.metrics.cache("a").unencodableCount()).isEqualTo(1);
    }

    @Test
    void aChunkOfAnotherCache_failsTheTransfer_andStoresNothing() throws Exception {
        a.kit.cacheManager.getEhcache("b").put(new Element("x", "y"));
        doAnswer(inv -> {
            InboundHandler.ChunkSink sink = inv.getArgument(3);
            try {
                sink.accept(a.st.open("b").next(1 << 16));
                return CompletableFuture.completedFuture(null);
            } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
            }
        }).when(b.transport).requestState(any(), anyString(), anyInt(), any());

        Throwable failure = fetch(1 << 16, new AtomicLong());

        assertThat(failure).hasMessageContaining("not an entry of a");
        assertThat(b.cache.getSize()).isZero();
    }

    /**
     * A put whose event the dispatcher has not written yet (its version pending the value's hash) is neither
     * served nor described to a peer — it will be replicated itself; once settled, it is served with its hash.
     */
    @Test
    void aPutWhoseEventIsOnItsWay_isNotServedUntilItsVersionIsSettled() throws Exception {
        byte[] value = {7, 7, 7};
        Element e = new Element("k", value);
        a.cache.put(e);
        Version v = a.ordering.localPendingPut(a.binding, a.cache, "k", e, EventCodec.hashOf("k"));
        CacheMetrics m = a.binding.metrics();
        assertThat(StateTransfer.entry("a", a.cache, a.binding.versions, "k", m, a.kit.warn)).isNull();
        assertThat(StateTransfer.version("a", "k", v, m, a.kit.warn)).isNull();
        a.binding.versions.settle("k", v, EventCodec.hashOf(value));
        byte[] served = StateTransfer.entry("a", a.cache, a.binding.versions, "k", m, a.kit.warn);
        ReplicationEvent ev = EventDecoder.decodeBatch(EventCodec.singletonBatch(served), 0,
                EventCodec.BATCH_HEADER_BYTES + served.length, CodecLimits.defaults()).events().get(0);
        assertThat(ev.stamp()).isEqualTo(v.stamp);
        assertThat(ev.valueHash()).isEqualTo(EventCodec.hashOf(value));
        assertThat(StateTransfer.version("a", "k", v, m, a.kit.warn)).isNotNull();
    }

    @Test
    void aCacheThisNodeLacks_isRefusedWithItsName() {
        assertThatThrownBy(() -> a.st.open("nowhere"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("has no live cache named 'nowhere'");
    }
}
