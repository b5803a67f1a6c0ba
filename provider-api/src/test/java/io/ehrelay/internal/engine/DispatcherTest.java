package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.config.OverflowPolicy;
import io.ehrelay.contract.Await;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import io.ehrelay.testing.ManualClock;
import net.sf.ehcache.Element;

/** The dispatcher with a scripted transport (a fake at the edge) and a clock the test moves. */
@Timeout(60)
class DispatcherTest {

    private final EngineTestKit kit = new EngineTestKit("dispatcherThreads", "1", "batchLingerMillis", "0");
    private final ManualClock clock = new ManualClock();
    private final Peer peer = new Peer("p:1");
    private final List<Integer> sentEventCounts = new CopyOnWriteArrayList<>();
    private final Set<String> undelivered = ConcurrentHashMap.newKeySet();
    private volatile boolean failNext = true;
    private final ReplicationQueue queue = new ReplicationQueue(1, 1 << 20, 1000, OverflowPolicy.DROP, 0);
    private final Dispatcher dispatcher = new Dispatcher(queue, kit.config, () -> Collections.singletonList(peer),
            new Scripted(), kit.metrics, Executors.defaultThreadFactory(), kit.warn, p -> undelivered.add(p.endpoint()),
            clock);
    private final CacheMetrics cache = kit.metrics.cache("a");

    /** Fails the first send, takes every later one. */
    private final class Scripted implements Transport {
        @Override
        public CompletableFuture<Void> send(Peer p, Batch batch, boolean acknowledge) {
            sentEventCounts.add(batch.eventCount());
            CompletableFuture<Void> f = new CompletableFuture<>();
            if (failNext) {
                failNext = false;
                f.completeExceptionally(new IOException("connection reset"));
            } else {
                f.complete(null);
            }
            return f;
        }

        @Override public void start(io.ehrelay.spi.TransportContext context) { }
        @Override public String localEndpoint() { return "self:0"; }
        @Override public CompletableFuture<Void> requestState(Peer p, String c, int m,
                io.ehrelay.spi.InboundHandler.ChunkSink s) { return new CompletableFuture<>(); }
        @Override public boolean isReachable(Peer p) { return true; }
        @Override public void stop() { }
    }

    @AfterEach
    void stop() {
        dispatcher.stop(1000);
        kit.close();
    }

    private void enqueue(String key) throws Exception {
        byte[] event = EventCodec.encodePut("a", new Element(key, "v"));
        cache.queueAdd(event.length);
        assertThat(queue.offer(0, new ReplicationQueue.Entry(cache, event, clock.nanoTime()))).isTrue();
    }

    @Test
    void aFailedBatch_isCountedPerEvent_andThePeerIsOwed() throws Exception {
        enqueue("k1"); // both queued before the dispatcher runs, so they travel in one batch
        enqueue("k2");
        dispatcher.start();
        Await.until(() -> cache.failedCount() == 2, () -> "failed " + cache.failedCount());
        assertThat(sentEventCounts).as("one batch of two events").containsExactly(2);
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
        Thread.sleep(300); // several idle polls (100 ms each, real time) with the clock standing still
        assertThat(sentEventCounts).containsExactly(1);

        clock.advanceMillis(501);
        Await.until(() -> sentEventCounts.size() == 2, () -> "no beat: " + sentEventCounts);
        assertThat(sentEventCounts.get(1)).as("an empty batch: its number shows the peer the gap").isZero();

        clock.advanceMillis(501); // the beat reached the peer: nothing is owed any more
        Thread.sleep(300);
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
