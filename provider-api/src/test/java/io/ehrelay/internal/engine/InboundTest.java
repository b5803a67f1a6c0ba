package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;

import java.nio.ByteBuffer;
import java.util.Arrays;

import io.ehrelay.contract.Gadget;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Op;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;
import net.sf.ehcache.event.CacheEventListenerAdapter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class InboundTest {

    private final EngineTestKit kit = new EngineTestKit();
    private final Convergence convergence = mock(Convergence.class);
    private final CacheBindings caches = new CacheBindings(kit.cacheManager, kit.metrics, l -> false);
    private final Membership membership = new Membership(kit.cacheManager.getName(), new RecordingTransport(),
            caches::liveReplicatedCaches, Clock.SYSTEM);
    private final Inbound inbound = new Inbound(kit.cacheManager.getName(), caches, kit.metrics,
            kit.config.limits(), convergence, kit.warn, Clock.SYSTEM, new Ordering(Clock.SYSTEM, 600_000, kit.warn),
            membership, from -> from, new Invalidations(kit.metrics, kit.config.limits().allowList(), kit.warn),
            mock(StateTransfer.class), mock(AntiEntropyServer.class), mock(PeerStats.class));
    private final Ehcache a = kit.cacheManager.getEhcache("a");

    @AfterEach
    void close() {
        kit.close();
    }

    private static byte[] put(String cache, String key, String value) throws Exception {
        return EventCodec.encodePut(cache, new Element(key, value));
    }

    private void receive(long stream, long seq, int flags, byte[]... events) throws MalformedFrameException {
        inbound.onEvents("peer:1", ByteBuffer.wrap(EngineTestKit.batch(stream, seq, flags, events)));
    }

    @Test
    void appliesPutsRemovesAndRemoveAll_toTheNamedCache() throws Exception {
        receive(9, 1, 0, put("a", "k1", "v1"), put("a", "k2", "v2"), put("b", "k1", "other"));
        assertThat(a.get("k1").getObjectValue()).isEqualTo("v1");
        receive(9, 2, 0, EventCodec.encodeKey(Op.REMOVE, "a", "k1"));
        assertThat(a.get("k1")).isNull();
        receive(9, 3, 0, EventCodec.encodeRemoveAll("a"));
        assertThat(a.getSize()).isZero();
        assertThat(kit.cacheManager.getEhcache("b").get("k1").getObjectValue()).isEqualTo("other");
        assertThat(kit.metrics.cache("a").appliedCount()).isEqualTo(4);
        verify(convergence, never()).behind(anyString(), anyLong(), anyBoolean());
    }

    @Test
    void aBatchThatArrivesAgain_isSkipped_soItCannotUndoALaterOne() throws Exception {
        byte[] first = EngineTestKit.batch(5, 1, 0, put("a", "k", "old"));
        inbound.onEvents("peer:1", ByteBuffer.wrap(first));
        receive(5, 2, 0, put("a", "k", "new"));
        inbound.onEvents("peer:1", ByteBuffer.wrap(first));
        assertThat(a.get("k").getObjectValue()).isEqualTo("new");
        assertThat(kit.metrics.meter("duplicateBatches").getCount()).isEqualTo(1);
    }

    @Test
    void missedBatches_andALostFlag_areReportedToConvergence() throws Exception {
        receive(5, 1, 0, put("a", "k", "1"));
        receive(5, 4, 0, put("a", "k", "4"));
        verify(convergence).behind("peer:1", 2, false);
        receive(5, 5, EventCodec.FLAG_LOST);
        verify(convergence).behind("peer:1", 0, true);
        assertThat(a.get("k").getObjectValue()).as("the events that did arrive are applied").isEqualTo("4");
    }

    @Test
    void anEventForACacheThisNodeDoesNotHave_isCountedAndDropped() throws Exception {
        receive(0, 0, 0, put("nosuch", "k", "v"));
        assertThat(kit.metrics.meter("unknownCache").getCount()).isEqualTo(1);
        assertThat(kit.cacheManager.cacheExists("nosuch")).isFalse();
    }

    @Test
    void anEventTheCacheRefuses_removesTheKeyHere_andIsCountedInApplyFailedAndInvalidated() throws Exception {
        a.put(new Element("k", "old"), true);
        a.getCacheEventNotificationService().registerListener(new CacheEventListenerAdapter() {
            @Override
            public void notifyElementUpdated(Ehcache cache, Element element) {
                throw new IllegalStateException("listener refuses " + element.getObjectKey());
            }
        });
        receive(0, 0, 0, put("a", "k", "v"));
        assertThat(a.get("k")).as("neither the old value nor a half-applied new one is served").isNull();
        assertThat(kit.metrics.cache("a").applyFailedCount()).isEqualTo(1);
        assertThat(kit.metrics.cache("a").invalidatedCount()).isEqualTo(1);
        assertThat(kit.metrics.cache("a").droppedCount()).isEqualTo(1);
        assertThat(kit.metrics.cache("a").appliedCount()).isZero();
    }

    @Test
    void aRejectedValue_removesTheOldEntry_inItsPlaceInTheBatch() throws Exception {
        a.put(new Element("k", "old"), true);
        receive(3, 1, 0, EventCodec.encodePut("a", new Element("k", new Gadget("x"))),
                put("a", "k2", "v2"));
        assertThat(a.get("k")).isNull();
        assertThat(a.get("k2").getObjectValue()).isEqualTo("v2");
        assertThat(kit.metrics.cache("a").invalidatedCount()).isEqualTo(1);
        assertThat(kit.metrics.cache("a").rejectedCount()).isEqualTo(1);
        assertThat(kit.metrics.cache("a").appliedCount()).isEqualTo(1);
        // a put of the same key after the rejected one, in a later batch, is applied as usual
        receive(3, 2, 0, put("a", "k", "new"));
        assertThat(a.get("k").getObjectValue()).isEqualTo("new");
    }

    @Test
    void keysThisNodeCannotRead_costOneScanPerBatch_andInvalidateOnlyTheKeysTheyName() throws Exception {
        // keys of a class this node's allow-list refuses, written here by the application (their versions known)
        CacheBinding binding = caches.bind("a");
        Ordering local = new Ordering(Clock.SYSTEM, 600_000, kit.warn);
        Gadget[] held = {new Gadget("held-0"), new Gadget("held-1"), new Gadget("held-2")};
        for (int i = 0; i < held.length; i++) {
            Element e = new Element(held[i], "v" + i);
            a.put(e, true);
            assertThat(local.localPut(binding, a, held[i], e, EventCodec.hashOf(held[i]), EventCodec.hashOf("v" + i)))
                    .isNotNull();
        }
        for (int i = 0; i < 500; i++) { // (the cache holds 1,000)
            a.put(new Element("s" + i, "x"), true);
            local.localPut(binding, a, "s" + i, a.get("s" + i), EventCodec.hashOf("s" + i), EventCodec.hashOf("x"));
        }
        long scans = binding.versions.scans();
        // a peer's batch: two of those keys, two this node never held, and readable events between them
        receive(7, 1, 0, put("a", "r1", "y"), EventCodec.encodePut("a", new Element(held[0], "remote")),
                EventCodec.encodeKey(Op.REMOVE, "a", new Gadget("never-held")), put("a", "r2", "y"),
                EventCodec.encodePut("a", new Element(held[1], "remote")),
                EventCodec.encodePut("a", new Element(new Gadget("never-held-2"), "remote")));
        assertThat(binding.versions.scans() - scans).as("scans of the version table for the batch").isEqualTo(1);
        assertThat(a.get(held[0])).isNull();
        assertThat(a.get(held[1])).isNull();
        assertThat(a.get(held[2]).getObjectValue()).isEqualTo("v2");
        assertThat(a.get("s7").getObjectValue()).isEqualTo("x");
        assertThat(a.get("r1").getObjectValue()).isEqualTo("y");
        assertThat(a.get("r2").getObjectValue()).isEqualTo("y");
        assertThat(kit.metrics.cache("a").rejectedCount()).isEqualTo(4);
        assertThat(kit.metrics.cache("a").invalidatedCount()).as("the two keys held").isEqualTo(2);
        assertThat(Gadget.readObjectRan).isFalse();
    }

    @Test
    void aDamagedBatch_appliesNothing_andIsCounted() throws Exception {
        byte[] good = EngineTestKit.batch(5, 1, 0, put("a", "k", "v"), put("a", "k2", "v2"));
        byte[] cut = Arrays.copyOf(good, good.length - 3);
        assertThatThrownBy(() -> inbound.onEvents("peer:1", ByteBuffer.wrap(cut)))
                .isInstanceOf(MalformedFrameException.class);
        assertThat(a.getSize()).isZero();
        assertThat(kit.metrics.meter("malformedFrames").getCount()).isEqualTo(1);
    }
}
