package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.config.OverflowPolicy;
import io.ehrelay.contract.Await;
import io.ehrelay.internal.codec.DecodedBatch;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;
import io.ehrelay.testing.LogCapture;
import io.ehrelay.testing.ManualClock;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The dispatcher with a scripted transport (a fake at the edge) and a clock the test moves. */
@Timeout(60)
class DispatcherTest {

    private final EngineTestKit kit = new EngineTestKit("dispatcherThreads", "1", "batchLingerMillis", "0");
    private final ManualClock clock = new ManualClock();
    private final Peer peer = new Peer("p:1");
    /** Fails the first send, takes every later one. */
    private final RecordingTransport scripted = new RecordingTransport().failNext(1);
    private final List<Integer> sentEventCounts = scripted.sentEventCounts;
    private final Set<String> undelivered = ConcurrentHashMap.newKeySet();
    private final ReplicationQueue queue = new ReplicationQueue(1, 1 << 20, 1000, OverflowPolicy.DROP, 0, Clock.SYSTEM);
    private final List<byte[]> sentBatches = scripted.sentBytes;
    private final Set<String> localCaches = ConcurrentHashMap.newKeySet();
    /** Counts lane 0's turns (its tick runs on each, at least every 100 ms while idle). */
    private final AtomicInteger polls = new AtomicInteger();
    /** Announcements go nowhere here (a transport that takes everything); the dispatcher only reads it. */
    private final Membership membership = new Membership("cm", new RecordingTransport(), () -> localCaches, clock);
    private final Dispatcher dispatcher = new Dispatcher(queue, kit.config, () -> Collections.singletonList(peer),
            scripted, kit.metrics, Executors.defaultThreadFactory(), kit.warn, p -> undelivered.add(p.endpoint()),
            clock, membership, polls::incrementAndGet, new PeerStats(kit.metrics, clock, () -> Long.MAX_VALUE, null));
    private final CacheMetrics cache = kit.metrics.cache("a");

    @AfterEach
    void stop() {
        dispatcher.stop(1000);
        kit.close();
    }

    private void enqueue(String key) throws Exception {
        enqueue(cache, key);
    }

    private void enqueue(CacheMetrics to, String key) throws Exception {
        byte[] event = EventCodec.encodePut(to.cacheName(), new Element(key, "v"));
        to.queueAdd(event.length);
        assertThat(queue.offer(0, new ReplicationQueue.Entry(to, event, clock.nanoTime()))).isTrue();
    }

    /** Waits until the dispatcher has made {@code n} more turns (each idle one waits up to 100 ms for events). */
    private void idlePolls(int n) {
        int until = polls.get() + n;
        Await.until(() -> polls.get() >= until, () -> "the dispatcher made " + polls.get() + " turns");
    }

    @Test
    void aPeerWithoutACache_isSentTheBatchWithoutThatCachesEvents_underTheSameNumber() throws Exception {
        scripted.failNext(0);
        membership.peersChanged(Collections.singletonList(peer));
        localCaches.addAll(Arrays.asList("a", "b"));
        membership.localAdded();
        membership.announced("p:1", 7, 1, Collections.singleton("a"), Collections.singleton("b")); // removed b
        CacheMetrics other = kit.metrics.cache("b");
        enqueue("k1");
        enqueue(other, "k2");
        enqueue("k3");
        dispatcher.start();
        Await.until(() -> cache.sentCount() == 2, () -> "sent " + cache.sentCount());
        assertThat(sentBatches).hasSize(1);
        DecodedBatch got = EventDecoder.decodeBatch(sentBatches.get(0), 0, sentBatches.get(0).length,
                kit.config.limits());
        assertThat(got.events()).extracting(e -> e.key()).containsExactly("k1", "k3");
        assertThat(got.seq()).as("the lane's number, as for peers sent the whole batch").isEqualTo(1);
        assertThat(other.sentCount()).as("b's event counts as sent to no one").isZero();
        assertThat(other.failedCount()).isZero();
        assertThat(other.queueEventCount()).isZero();

        membership.announced("p:1", 7, 2, new HashSet<>(Arrays.asList("a", "b")),
                Collections.<String>emptySet());
        enqueue(other, "k4");
        Await.until(() -> other.sentCount() == 1, () -> "b's event not sent once the peer holds b");
        membership.announced("p:1", 7, 1, Collections.singleton("a"), Collections.singleton("b")); // late
        assertThat(membership.has("p:1", "b")).isTrue();
    }

    @Test
    void aTransportThatKeepsValuesByReference_isGivenTheElementsOwnLargeArrays_andTheSameBytes() throws Exception {
        scripted.failNext(0);
        scripted.byReference = true;
        byte[] large = new byte[4096];
        Arrays.fill(large, (byte) 3);
        byte[] small = new byte[ValueRefs.MIN_BYTES - 1];
        byte[] name = "a".getBytes(StandardCharsets.UTF_8);
        Element[] elements = {new Element("k1", large), new Element("k2", small), new Element("k3", "text"),
            new Element("k4", large.clone())};
        for (Element e : elements) {
            cache.queueAdd(100);
            assertThat(queue.offer(0, new ReplicationQueue.Entry(cache, name, e, 100, clock.nanoTime(),
                    new Version(5, 9, 0, 0, false), null)))
                    .isTrue();
        }
        dispatcher.start();
        Await.until(() -> cache.sentCount() == 4, () -> "sent " + cache.sentCount());
        assertThat(scripted.sentPieces).hasSize(1);
        Batch.Pieces p = scripted.sentPieces.get(0);
        List<byte[]> arrays = new ArrayList<>();
        byte[] joined = new byte[p.length()];
        int at = 0;
        for (int i = 0; i < p.count(); i++) {
            arrays.add(p.array(i));
            System.arraycopy(p.array(i), p.offset(i), joined, at, p.length(i));
            at += p.length(i);
        }
        assertThat(joined).as("the pieces are the batch's bytes").isEqualTo(sentBatches.get(0));
        assertThat(arrays).as("the large values travel as their own arrays; the small one is copied")
                .anySatisfy(a -> assertThat(a).isSameAs(large))
                .anySatisfy(a -> assertThat(a).isSameAs(elements[3].getObjectValue()))
                .noneSatisfy(a -> assertThat(a).isSameAs(small));
        assertThat(p.count()).as("copied bytes, large, copied bytes, large, the last element's metadata").isEqualTo(5);
        DecodedBatch got = EventDecoder.decodeBatch(joined, 0, joined.length, kit.config.limits());
        assertThat(got.events()).extracting(e -> e.key()).containsExactly("k1", "k2", "k3", "k4");
        assertThat((byte[]) got.events().get(0).value()).isEqualTo(large);
    }

    @Test
    void aTransportThatWritesToStreams_getsBatchesEncodedOnTheHeap_writtenInOneCallEach() throws Exception {
        scripted.failNext(0);
        scripted.onHeap = true;
        byte[] value = new byte[2000]; // larger than the scratch a direct batch would be staged through
        Arrays.fill(value, (byte) 5);
        byte[] name = "a".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < 3; i++) {
            cache.queueAdd(100);
            assertThat(queue.offer(0, new ReplicationQueue.Entry(cache, name, new Element("k" + i, value), 100,
                    clock.nanoTime(), new Version(5, 9, 0, 0, false), null))).isTrue();
        }
        dispatcher.start();
        Await.until(() -> cache.sentCount() == 3, () -> "sent " + cache.sentCount());
        assertThat(scripted.writtenArrays).hasSize(1);
        assertThat(scripted.writtenArrays.get(0)).as("the batch's own array, in one write").hasSize(1);
        assertThat(scripted.writtenArrays.get(0).get(0).length).isGreaterThanOrEqualTo(sentBatches.get(0).length);
        DecodedBatch got = EventDecoder.decodeBatch(sentBatches.get(0), 0, sentBatches.get(0).length,
                kit.config.limits());
        assertThat(got.events()).extracting(e -> e.key()).containsExactly("k0", "k1", "k2");
        assertThat((byte[]) got.events().get(2).value()).isEqualTo(value);
    }

    @Test
    void aLaneThatMeetsAnUnexpectedError_goesOn_countsTheBatchFailed_andFlagsItLost() throws Exception {
        scripted.failNext(0);
        scripted.throwNext = new OutOfMemoryError("thrown by the test's transport");
        try (LogCapture log = LogCapture.start()) {
            enqueue("k1");
            enqueue("k2");
            dispatcher.start();
            Await.until(() -> cache.failedCount() == 2, () -> "failed " + cache.failedCount());
            // before, the lane's thread ended here: nothing was ever sent again, and nothing said so
            enqueue("k3");
            Await.until(() -> cache.sentCount() == 1, () -> "sent " + cache.sentCount());
            DecodedBatch next = EventDecoder.decodeBatch(sentBatches.get(0), 0, sentBatches.get(0).length,
                    kit.config.limits());
            assertThat(next.events()).extracting(e -> e.key()).containsExactly("k3");
            assertThat(next.flags() & EventCodec.FLAG_LOST).as("the peer is told it missed events").isNotZero();
            assertThat(log.lines("met an unexpected failure; 2 events counted as failed")).hasSize(1);
        }
    }

    @Test
    void aFailedBatch_isCountedPerEvent_andThePeerIsOwed() throws Exception {
        enqueue("k1"); // both queued before the dispatcher runs, so they travel in one batch
        enqueue("k2");
        dispatcher.start();
        Await.until(() -> cache.failedCount() == 2, () -> "failed " + cache.failedCount());
        assertThat(sentEventCounts).as("one batch of two events").containsExactly(2);
        // the debt is recorded right after the failure is counted, on the dispatcher's thread
        Await.until(() -> undelivered.contains("p:1"), () -> "peer not owed");
        assertThat(undelivered).containsExactly("p:1");
        assertThat(cache.queueEventCount()).isZero();
        enqueue("k3");
        Await.until(() -> cache.sentCount() == 1, () -> "sent " + cache.sentCount());
        assertThat(dispatcher.lastSeq(0)).as("every batch numbered").isEqualTo(2);
    }

    @Test
    void whileAPeerMissedABatch_anIdleLaneSendsAnEmptyBatch_onlyAfterHalfASecondOfClockTime() throws Exception {
        dispatcher.start();
        enqueue("k1");
        Await.until(() -> undelivered.contains("p:1"), () -> "no failed send");
        idlePolls(3); // with the clock standing still
        assertThat(sentEventCounts).containsExactly(1);

        clock.advanceMillis(501);
        Await.until(() -> sentEventCounts.size() == 2, () -> "no beat: " + sentEventCounts);
        assertThat(sentEventCounts.get(1)).as("an empty batch: its number shows the peer the gap").isZero();

        clock.advanceMillis(501); // the beat reached the peer: nothing is owed any more
        idlePolls(3);
        assertThat(sentEventCounts).hasSize(2);
    }

    @Test
    void stopDrains_thenCountsWhatIsLeftAsDropped() throws Exception {
        enqueue("k1");
        enqueue("k2");
        assertThat(dispatcher.stop(0)).isEqualTo(2);
        assertThat(cache.droppedCount()).isEqualTo(2);
        assertThat(cache.queueEventCount()).isZero();
    }
}
