package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import io.ehrelay.config.OverflowPolicy;
import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.internal.config.ReplicatorConfig;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.spi.Transport;
import io.ehrelay.testing.ManualClock;
import io.ehrelay.testing.TestProperties;
import net.sf.ehcache.CacheException;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class OutboundTest {

    private static final ReplicatorConfig ASYNC = replicator();
    private static final ReplicatorConfig SYNC = replicator("replicateAsynchronously", "false",
            "syncTimeoutMillis", "500");

    private final EngineTestKit kit = new EngineTestKit();
    private final ManualClock clock = new ManualClock();
    private final Transport transport = mock(Transport.class);
    private final Convergence convergence = mock(Convergence.class);
    private final List<Peer> peers = Collections.singletonList(new Peer("p:1"));
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ReplicationQueue queue = new ReplicationQueue(1, 1 << 20, 2, OverflowPolicy.DROP, 0, Clock.SYSTEM);
    private final Outbound outbound = new Outbound("cm", kit.config, queue, cacheName -> peers, transport, kit.metrics,
            running::get, convergence, kit.warn, clock, new SentClasses(kit.config.limits().allowList(), true),
            new Ordering(clock, 600_000, kit.warn));
    private final CacheBinding binding = new CacheBindings(kit.cacheManager, kit.metrics, l -> false).bind("a");

    @AfterEach
    void close() {
        kit.close();
    }

    private static ReplicatorConfig replicator(String... kv) {
        Properties p = TestProperties.of(kv);
        return ReplicatorConfig.parse("test", p);
    }

    @Test
    void aValueThatCannotBeEncoded_isCountedInUnencodable_theWriteGoesOn_andThePeersInvalidateTheKey()
            throws Exception {
        when(transport.send(any(), any(), anyBoolean())).thenReturn(CompletableFuture.completedFuture(null));
        Element e = new Element("k", new Object());
        assertThatCode(() -> outbound.put(binding, null, e, ASYNC)).doesNotThrowAnyException();
        assertThat(binding.metrics().unencodableCount()).isEqualTo(1);
        assertThat(binding.metrics().failedCount()).as("still counted in failed until the next minor").isEqualTo(1);
        List<ReplicationQueue.Entry> queued = queue.take(0, 10, 1 << 20, 0, 0);
        assertThat(queued).hasSize(1);
        assertThat(decoded(queued.get(0).bytes)).as("an invalidation of the key takes the put's place")
                .isEqualTo("INVALIDATE a/k stamped");
        assertThatCode(() -> outbound.put(binding, null, e, SYNC)).doesNotThrowAnyException();
        verify(transport).send(any(), argThat(b -> b.eventCount() == 1), anyBoolean());
    }

    /** A value whose serialization throws an Error (as a deep graph or a huge value does). */
    static final class Throws implements Serializable {
        private static final long serialVersionUID = 1L;
        private final boolean overflow;

        Throws(boolean overflow) {
            this.overflow = overflow;
        }

        private void writeObject(ObjectOutputStream out) {
            if (overflow) {
                throw new StackOverflowError("deep graph");
            }
            throw new OutOfMemoryError("huge value");
        }
    }

    @Test
    void anErrorWhileSerializing_isCountedInUnencodable_andNeverReachesTheWriter() throws Exception {
        when(transport.send(any(), any(), anyBoolean())).thenReturn(CompletableFuture.completedFuture(null));
        for (ReplicatorConfig rc : Arrays.asList(ASYNC, SYNC)) {
            assertThatCode(() -> outbound.put(binding, null, new Element("k", new Throws(true)), rc))
                    .doesNotThrowAnyException();
            assertThatCode(() -> outbound.put(binding, null, new Element("k", new Throws(false)), rc))
                    .doesNotThrowAnyException();
            if (rc == ASYNC) {
                assertThat(queue.take(0, 10, 1 << 20, 0, 0)).as("an invalidation of the key for each put")
                        .extracting(q -> decoded(q.bytes)).containsExactly("INVALIDATE a/k stamped",
                                "INVALIDATE a/k stamped");
            }
            assertThatCode(() -> outbound.keyEvent(binding, null, Op.REMOVE, null, new Throws(true), rc))
                    .doesNotThrowAnyException();
            if (rc == ASYNC) {
                assertThat(queue.take(0, 10, 1 << 20, 0, 0)).as("a key that cannot be encoded was never sent: "
                        + "nothing for the peers, no removeAll").isEmpty();
            }
        }
        assertThat(binding.metrics().unencodableCount()).isEqualTo(6);
    }

    @Test
    void aKeyThatIsNotSerializable_isNotReplicated_asStock_andCountedInNotReplicated() throws Exception {
        Object key = new Object();
        for (ReplicatorConfig rc : Arrays.asList(ASYNC, SYNC)) {
            assertThatCode(() -> outbound.put(binding, null, new Element(key, "v"), rc)).doesNotThrowAnyException();
            assertThatCode(() -> outbound.keyEvent(binding, null, Op.INVALIDATE, null, key, rc)).doesNotThrowAnyException();
            assertThatCode(() -> outbound.keyEvent(binding, null, Op.REMOVE, null, key, rc)).doesNotThrowAnyException();
        }
        assertThat(queue.take(0, 10, 1 << 20, 0, 0)).as("nothing for the peers, no removeAll").isEmpty();
        verify(transport, org.mockito.Mockito.never()).send(any(), any(), anyBoolean());
        assertThat(binding.metrics().notReplicatedCount()).isEqualTo(6);
        assertThat(binding.metrics().unencodableCount()).isZero();
        assertThat(binding.metrics().failedCount()).isZero();
    }

    @Test
    void anAsynchronousPutOfFastPathTypes_isQueuedWithItsExactSize_unencoded() throws Exception {
        Element e = new Element(42L, new byte[] {1, 2, 3});
        outbound.put(binding, null, e, ASYNC);
        List<ReplicationQueue.Entry> taken = queue.take(0, 10, 1 << 20, 0, 0);
        assertThat(taken).hasSize(1);
        assertThat(taken.get(0).element).isSameAs(e);
        assertThat(taken.get(0).size).isEqualTo(EventCodec.putSize(binding.nameUtf8, e));
    }

    /**
     * The application's thread does not hash a fast-path put's value (a large value was read twice on it): its
     * version is pending, and the dispatcher settles it with the hash of the value it writes. A put the queue
     * refuses is settled at once — the peers are then owed this node's state, and a pending version is never
     * served.
     */
    @Test
    void aFastPathPut_leavesItsValueHashToTheDispatcher_unlessTheQueueRefusesIt() throws Exception {
        byte[] value = {1, 2, 3};
        outbound.put(binding, null, new Element(1L, value), ASYNC);
        Version v = binding.versions.get(1L);
        assertThat(v.pending()).isTrue();
        outbound.put(binding, null, new Element(2L, new byte[] {4}), ASYNC);
        byte[] refusedValue = {5, 6};
        outbound.put(binding, null, new Element(3L, refusedValue), ASYNC); // the queue holds 2 events
        assertThat(binding.metrics().droppedCount()).isEqualTo(1);
        Version refused = binding.versions.get(3L);
        assertThat(refused.pending()).isFalse();
        assertThat(refused.valueHash).isEqualTo(EventCodec.hashOf(refusedValue));
        ReplicationQueue.Entry queued = queue.take(0, 10, 1 << 20, 0, 0).get(0);
        assertThat(queued.version).isSameAs(v);
        assertThat(queued.settle()).isEqualTo(EventCodec.hashOf(value));
        assertThat(v.pending()).isFalse();
        assertThat(v.valueHash).isEqualTo(EventCodec.hashOf(value));
    }

    @Test
    void anAsynchronousPutOfOtherTypes_isQueuedAsItsBytes() throws Exception {
        Element e = new Element("k", "v");
        outbound.put(binding, null, e, ASYNC);
        List<ReplicationQueue.Entry> taken = queue.take(0, 10, 1 << 20, 0, 0);
        assertThat(taken.get(0).element).isNull();
        assertThat(decoded(taken.get(0).bytes)).isEqualTo("PUT a/k stamped");
    }

    /** An encoded event as "OP cache/key stamped|unstamped". */
    private static String decoded(byte[] event) {
        try {
            ReplicationEvent ev = EventDecoder.decodeBatch(EventCodec.singletonBatch(event), 0,
                    EventCodec.BATCH_HEADER_BYTES + event.length, CodecLimits.defaults())
                    .events().get(0);
            return ev + (ev.stamp() > 0 ? " stamped" : " unstamped");
        } catch (MalformedFrameException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aFullQueue_dropsAndCounts_andEveryPeerIsOwedAResync() {
        for (int i = 0; i < 3; i++) {
            outbound.keyEvent(binding, null, Op.REMOVE, null, "k" + i, ASYNC);
        }
        assertThat(binding.metrics().droppedCount()).isEqualTo(1);
        verify(convergence).oweAll(peers);
    }

    @Test
    void beforeStartOrAfterStop_eventsAreDropped_andNobodyIsOwed() {
        running.set(false);
        outbound.removeAll(binding, null, ASYNC);
        assertThat(binding.metrics().droppedCount()).isEqualTo(1);
        verify(convergence, never()).oweAll(any());
    }

    @Test
    void aSynchronousPutNotAcknowledged_throwsNamingThePeerAndTheReason() {
        CompletableFuture<Void> refused = new CompletableFuture<>();
        refused.completeExceptionally(new IOException("connection refused"));
        when(transport.send(any(), any(), anyBoolean())).thenReturn(refused);
        assertThatThrownBy(() -> outbound.put(binding, null, new Element("k", "v"), SYNC))
                .isInstanceOf(CacheException.class)
                .hasMessageContaining("syncTimeoutMillis=500")
                .hasMessageContaining("p:1 (IOException: connection refused)");
        assertThat(binding.metrics().failedCount()).isEqualTo(1);
    }

    @Test
    void withSyncFailurePolicyCount_theFailureIsCountedNotThrown() {
        when(transport.send(any(), any(), anyBoolean())).thenReturn(new CompletableFuture<>());
        ReplicatorConfig count = replicator("replicateAsynchronously", "false", "syncTimeoutMillis", "50",
                "syncFailurePolicy", "count");
        assertThatCode(() -> outbound.keyEvent(binding, null, Op.INVALIDATE, null, "k", count)).doesNotThrowAnyException();
        assertThat(binding.metrics().failedCount()).isEqualTo(1);
    }

    @Test
    void anAcknowledgementAfterTheDeadline_isAFailure() {
        when(transport.send(any(), any(), anyBoolean())).then(call -> {
            clock.advanceMillis(800); // a transport that cannot bound its call, answering late
            return CompletableFuture.completedFuture(null);
        });
        assertThatThrownBy(() -> outbound.put(binding, null, new Element("k", "v"), SYNC))
                .hasMessageContaining("acknowledged after 800 ms");
        assertThat(binding.metrics().sentCount()).isZero();
    }

    @Test
    void aSynchronousPutAcknowledgedInTime_isCountedAsSent() {
        when(transport.send(any(), any(), anyBoolean())).thenReturn(CompletableFuture.completedFuture(null));
        outbound.put(binding, null, new Element("k", "v"), SYNC);
        assertThat(binding.metrics().sentCount()).isEqualTo(1);
    }
}
