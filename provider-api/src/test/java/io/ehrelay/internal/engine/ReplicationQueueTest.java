package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.config.OverflowPolicy;
import io.ehrelay.contract.Await;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.Clock;
import io.ehrelay.testing.ManualClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ReplicationQueueTest {

    private final CacheMetrics cache = new ReplicationMetrics("q", "test").cache("c");

    private ReplicationQueue.Entry entry(int bytes) {
        return new ReplicationQueue.Entry(cache, new byte[bytes], System.nanoTime());
    }

    @Test
    void dropPolicy_refusesPastTheEventBound() throws Exception {
        ReplicationQueue q = new ReplicationQueue(1, 1 << 20, 3, OverflowPolicy.DROP, 0, Clock.SYSTEM);
        assertThat(q.offer(0, entry(10))).isTrue();
        assertThat(q.offer(0, entry(10))).isTrue();
        assertThat(q.offer(0, entry(10))).isTrue();
        assertThat(q.offer(0, entry(10))).isFalse();
        assertThat(q.highWaterEvents()).isEqualTo(3);
    }

    @Test
    void dropPolicy_refusesPastTheByteBound() throws Exception {
        ReplicationQueue q = new ReplicationQueue(1, 100, 1000, OverflowPolicy.DROP, 0, Clock.SYSTEM);
        assertThat(q.offer(0, entry(60))).isTrue();
        assertThat(q.offer(0, entry(60))).isFalse();
        assertThat(q.offer(0, entry(40))).isTrue();
        assertThat(q.offer(0, entry(101))).as("larger than the whole bound").isFalse();
        assertThat(q.highWaterBytes()).isEqualTo(100);
    }

    @Test
    void blockPolicy_waitsForRoomThenGivesUp() throws Exception {
        ReplicationQueue q = new ReplicationQueue(1, 1 << 20, 1, OverflowPolicy.BLOCK, 150, Clock.SYSTEM);
        assertThat(q.offer(0, entry(1))).isTrue();
        long t0 = System.nanoTime();
        assertThat(q.offer(0, entry(1))).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).isGreaterThanOrEqualTo(140);
    }

    @Test
    void blockPolicy_doesNotWaitWhileNothingIsTaken_andWaitsAgainOnceTheQueueDrains() throws Exception {
        ManualClock clock = new ManualClock();
        ReplicationQueue q = new ReplicationQueue(1, 1 << 20, 1, OverflowPolicy.BLOCK, 300, clock);
        AtomicLong waits = new AtomicLong();
        q.onWait(n -> waits.incrementAndGet());
        assertThat(q.offer(0, entry(1))).isTrue();
        clock.advanceMillis(400); // no dispatcher took anything for longer than the wait
        long t0 = System.nanoTime();
        assertThat(q.offer(0, entry(1))).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("ms waited").isLessThan(150);
        assertThat(waits).hasValue(0);
        assertThat(q.take(0, 10, 1 << 20, 0, 0)).hasSize(1);
        assertThat(q.offer(0, entry(1))).isTrue();
        t0 = System.nanoTime();
        assertThat(q.offer(0, entry(1))).isFalse();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("ms waited after a take")
                .isGreaterThanOrEqualTo(250);
        assertThat(waits).as("waits told").hasValue(1);
    }

    /** A dispatcher that takes up to {@code count} events of a lane once the calling thread waits (for room). */
    private static Thread takeOnceThisThreadWaits(ReplicationQueue q, int lane, int count) {
        Thread offering = Thread.currentThread();
        Thread taker = new Thread(() -> {
            try {
                Await.until(() -> offering.getState() == Thread.State.TIMED_WAITING, () -> "the offer did not wait");
                q.take(lane, count, 1 << 20, 0, TimeUnit.SECONDS.toNanos(1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        taker.start();
        return taker;
    }

    @Test
    void blockPolicy_proceedsWhenTheDispatcherMakesRoom() throws Exception {
        ReplicationQueue q = new ReplicationQueue(1, 1 << 20, 1, OverflowPolicy.BLOCK, 10_000, Clock.SYSTEM);
        assertThat(q.offer(0, entry(1))).isTrue();
        Thread taker = takeOnceThisThreadWaits(q, 0, 10);
        assertThat(q.offer(0, entry(1))).isTrue();
        taker.join();
    }

    @Test
    void blockPolicy_aWriterThatWaited_goesOnOnceItsLaneIsAnEighthEmptier_notAtTheFirstRoom() throws Exception {
        ReplicationQueue q = new ReplicationQueue(1, 1 << 20, 16, OverflowPolicy.BLOCK, 10_000, Clock.SYSTEM);
        for (int i = 0; i < 16; i++) {
            assertThat(q.offer(0, entry(1))).isTrue();
        }
        AtomicLong accepted = new AtomicLong();
        Thread writer = new Thread(() -> {
            try {
                if (q.offer(0, entry(1))) {
                    accepted.incrementAndGet();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        writer.start();
        Await.until(() -> writer.getState() == Thread.State.TIMED_WAITING, () -> "the writer did not wait");
        assertThat(q.take(0, 1, 1 << 20, 0, 0)).hasSize(1);
        Thread.sleep(200);
        assertThat(writer.getState()).as("room for one event, the lane one event emptier")
                .isEqualTo(Thread.State.TIMED_WAITING);
        assertThat(accepted).hasValue(0);
        assertThat(q.take(0, 1, 1 << 20, 0, 0)).hasSize(1); // two of 16 taken: an eighth
        writer.join(5000);
        assertThat(writer.isAlive()).isFalse();
        assertThat(accepted).hasValue(1);
    }

    @Test
    void blockPolicy_aWriterWhoseLaneIsDrained_goesOnAtTheFirstRoom_whileAnotherLaneHoldsTheQueue() throws Exception {
        ReplicationQueue q = new ReplicationQueue(2, 1 << 20, 16, OverflowPolicy.BLOCK, 10_000, Clock.SYSTEM);
        for (int i = 0; i < 15; i++) {
            assertThat(q.offer(1, entry(1))).isTrue(); // a lane whose peer does not take
        }
        assertThat(q.offer(0, entry(1))).isTrue();
        offerToLane0GoesOnOnceTaken(q, 0, 10);
    }

    @Test
    void blockPolicy_aWriterWhoseLaneIsEmpty_goesOnWhenAnotherLaneMakesRoom() throws Exception {
        ReplicationQueue q = new ReplicationQueue(2, 1 << 20, 16, OverflowPolicy.BLOCK, 10_000, Clock.SYSTEM);
        for (int i = 0; i < 16; i++) {
            assertThat(q.offer(1, entry(1))).isTrue(); // the other lane holds the whole queue
        }
        offerToLane0GoesOnOnceTaken(q, 1, 1);
    }

    /**
     * An offer to lane 0 of a full queue (10 s allowed) that the queue takes well before its time is up, once a
     * dispatcher took up to {@code count} events of {@code lane}.
     */
    private void offerToLane0GoesOnOnceTaken(ReplicationQueue q, int lane, int count) throws Exception {
        Thread taker = takeOnceThisThreadWaits(q, lane, count);
        long t0 = System.nanoTime();
        assertThat(q.offer(0, entry(1))).isTrue();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("ms waited, of the 10 s allowed")
                .isLessThan(5_000);
        taker.join();
    }

    @Test
    void take_respectsCountAndBytesAndKeepsOrder() throws Exception {
        ReplicationQueue q = new ReplicationQueue(2, 1 << 20, 1000, OverflowPolicy.DROP, 0, Clock.SYSTEM);
        for (int i = 1; i <= 10; i++) {
            q.offer(0, entry(i * 10));
        }
        List<ReplicationQueue.Entry> first = q.take(0, 3, 1 << 20, 0, 0);
        assertThat(first).extracting(e -> e.bytes.length).containsExactly(10, 20, 30);
        List<ReplicationQueue.Entry> second = q.take(0, 100, 100, 0, 0);
        assertThat(second).extracting(e -> e.bytes.length).containsExactly(40, 50);
        assertThat(q.take(1, 100, 1 << 20, 0, 0)).as("other lane").isEmpty();
        List<ReplicationQueue.Entry> big = q.take(0, 100, 10, 0, 0);
        assertThat(big).as("one event larger than the batch bound still goes alone").hasSize(1);
    }

    @Test
    void close_wakesWaitersAndRefusesNewEvents() throws Exception {
        ReplicationQueue q = new ReplicationQueue(1, 1 << 20, 10, OverflowPolicy.DROP, 0, Clock.SYSTEM);
        Thread waiter = new Thread(() -> {
            try {
                q.take(0, 10, 1 << 20, 0, TimeUnit.SECONDS.toNanos(20));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        waiter.start();
        Thread.sleep(50);
        q.close();
        waiter.join(5000);
        assertThat(waiter.isAlive()).isFalse();
        assertThat(q.offer(0, entry(1))).isFalse();
    }
}
