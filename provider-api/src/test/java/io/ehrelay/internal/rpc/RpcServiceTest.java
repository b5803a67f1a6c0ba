package io.ehrelay.internal.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import io.ehrelay.contract.Await;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.testing.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class RpcServiceTest {

    private final InboundHandler inbound = mock(InboundHandler.class);
    private final ManualClock clock = new ManualClock();
    private final List<String> applied = new CopyOnWriteArrayList<>();
    private final RpcService service = new RpcService(inbound, 1 << 20, Executors.defaultThreadFactory(), 1000,
            from -> applied.add("hello " + from), clock);

    @AfterEach
    void close() {
        service.close(1000);
    }

    private void recordApplies() throws Exception {
        doAnswer(call -> {
            ByteBuffer b = call.getArgument(1);
            applied.add(call.getArgument(0) + ":" + b.get(b.position()));
            return null;
        }).when(inbound).onEvents(anyString(), any());
    }

    @Test
    void postsOfOneSender_areAppliedInOrder_andADeliveryWaitsBehindThem() throws Exception {
        recordApplies();
        for (int i = 1; i <= 50; i++) {
            service.post("a:1", new byte[] {(byte) i});
        }
        service.deliver("a:1", new byte[] {51});
        assertThat(applied).hasSize(51);
        for (int i = 0; i < 51; i++) {
            assertThat(applied.get(i)).isEqualTo("a:1:" + (i + 1));
        }
    }

    /**
     * The caller's array goes back to be reused only once nothing reads it: {@code done} runs once per batch, after
     * the batch was applied (posted, delivered inline or behind others), and at once for a refused batch.
     */
    @Test
    void done_runsOncePerBatch_afterItWasApplied_orAtOnceWhenRefused() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        Map<Integer, Integer> doneCount = new ConcurrentHashMap<>();
        List<String> order = new CopyOnWriteArrayList<>();
        doAnswer(call -> {
            ByteBuffer b = call.getArgument(1);
            int id = b.get(b.position());
            if (id == 1) {
                gate.await(10, TimeUnit.SECONDS);
            }
            order.add("applied " + id);
            return null;
        }).when(inbound).onEvents(anyString(), any());
        IntFunction<Runnable> done = id -> () -> {
            order.add("done " + id);
            doneCount.merge(id, 1, Integer::sum);
        };
        service.post("a:1", ByteBuffer.wrap(new byte[] {1}), done.apply(1));
        service.post("a:1", ByteBuffer.wrap(new byte[] {2}), done.apply(2));
        assertThat(doneCount).as("nothing given back while the batches wait or are applied").isEmpty();
        gate.countDown();
        service.deliver("a:1", ByteBuffer.wrap(new byte[] {3}), done.apply(3)); // behind the posts
        service.deliver("b:1", ByteBuffer.wrap(new byte[] {4}), done.apply(4)); // inline
        Await.until(() -> doneCount.size() == 4, () -> "batches given back: " + doneCount.keySet());
        for (int id = 1; id <= 4; id++) {
            assertThat(order.indexOf("done " + id)).as("batch " + id).isGreaterThan(order.indexOf("applied " + id));
        }
        // refused: an empty batch, a malformed one, a closed service
        assertThatThrownBy(() -> service.post("a:1", ByteBuffer.allocate(0), done.apply(5)))
                .isInstanceOf(RpcException.class);
        doThrow(new MalformedFrameException("bad")).when(inbound).onEvents(eq("c:1"), any());
        assertThatThrownBy(() -> service.deliver("c:1", ByteBuffer.wrap(new byte[] {6}), done.apply(6)))
                .isInstanceOf(RpcException.class);
        service.close(1000);
        assertThatThrownBy(() -> service.post("a:1", ByteBuffer.wrap(new byte[] {7}), done.apply(7)))
                .isInstanceOf(RpcException.class);
        Thread.sleep(50);
        assertThat(doneCount).containsOnlyKeys(1, 2, 3, 4, 5, 6, 7).allSatisfy((k, v) -> assertThat(v).isEqualTo(1));
    }

    /**
     * A sender claiming ever new names (2,000 here, as an attacker would): the batches are applied by at most
     * {@link RpcService#APPLY_THREADS} threads, each name's batches in order, and nothing is kept per name once
     * its batches are applied.
     */
    @Test
    void twoThousandSenderNames_shareTheBoundedPool_andLeaveNoStateBehind() throws Exception {
        Set<String> threads = ConcurrentHashMap.newKeySet();
        Map<String, List<Integer>> perSender = new ConcurrentHashMap<>();
        doAnswer(call -> {
            threads.add(Thread.currentThread().getName());
            ByteBuffer b = call.getArgument(1);
            perSender.computeIfAbsent(call.getArgument(0), k -> new CopyOnWriteArrayList<>())
                    .add((int) b.get(b.position()));
            Thread.sleep(0, 100_000);
            return null;
        }).when(inbound).onEvents(anyString(), any());
        for (int round = 1; round <= 3; round++) {
            for (int i = 0; i < 2000; i++) {
                service.post("invented-" + i + ":1", new byte[] {(byte) round});
            }
        }
        Await.until(() -> perSender.values().stream().mapToInt(List::size).sum() == 6000,
                () -> "applied " + perSender.values().stream().mapToInt(List::size).sum() + " of 6000");
        assertThat(threads).as("apply threads used").hasSizeLessThanOrEqualTo(RpcService.APPLY_THREADS);
        assertThat(perSender).hasSize(2000);
        assertThat(perSender.values()).allSatisfy(l -> assertThat(l).containsExactly(1, 2, 3));
        Await.until(() -> service.activeSenders() == 0, () -> service.activeSenders() + " senders still kept");
    }

    @Test
    void aDamagedDeliveredBatch_tellsTheCallerWhy() throws Exception {
        doThrow(new MalformedFrameException("truncated")).when(inbound).onEvents(anyString(), any());
        assertThatThrownBy(() -> service.deliver("a:1", new byte[] {1}))
                .isInstanceOf(RpcException.class).hasMessageContaining("batch rejected: truncated");
    }

    @Test
    void aDamagedPostedBatch_doesNotStopTheSendersLaterOnes() throws Exception {
        doThrow(new MalformedFrameException("bad")).doAnswer(call -> {
            applied.add("ok");
            return null;
        }).when(inbound).onEvents(anyString(), any());
        service.post("a:1", new byte[] {1});
        service.post("a:1", new byte[] {2});
        Await.until(() -> applied.contains("ok"), () -> "the second post was not applied");
    }

    @Test
    void stateTransfers_arePaged_andClosedAtTheEnd() throws Exception {
        InboundHandler.StateCursor cursor = mock(InboundHandler.StateCursor.class);
        when(cursor.next(org.mockito.ArgumentMatchers.anyInt())).thenReturn(new byte[] {1}, new byte[] {2}, null);
        when(inbound.openState("c")).thenReturn(cursor);
        long id = service.openState("c");
        assertThat(service.nextState(id, 100)).containsExactly(1);
        assertThat(service.nextState(id, 100)).containsExactly(2);
        assertThat(service.nextState(id, 100)).isNull();
        assertThat(service.openTransfers()).isZero();
        assertThatThrownBy(() -> service.nextState(id, 100)).hasMessageContaining("no open state transfer");
    }

    @Test
    void anIdleTransfer_expires_andOpenTransfersAreBounded() throws Exception {
        when(inbound.openState(eq("c"))).thenReturn(max -> new byte[] {1});
        long first = service.openState("c");
        for (int i = 1; i < RpcService.MAX_TRANSFERS; i++) {
            service.openState("c");
        }
        assertThatThrownBy(() -> service.openState("c")).hasMessageContaining("already open");

        clock.advance(RpcService.TRANSFER_IDLE_SECONDS - 1, TimeUnit.SECONDS);
        service.nextState(first, 10); // used: stays
        clock.advance(2, TimeUnit.SECONDS);
        long again = service.openState("c"); // the idle ones expire, the used one stays
        assertThat(service.openTransfers()).isEqualTo(2);
        assertThat(service.nextState(first, 10)).containsExactly(1);
        assertThat(again).isNotEqualTo(first);
    }

    @Test
    void anUnknownCache_isAnRpcError() throws Exception {
        when(inbound.openState("nosuch")).thenThrow(new IllegalArgumentException("no live cache named 'nosuch'"));
        assertThatThrownBy(() -> service.openState("nosuch")).isInstanceOf(RpcException.class)
                .hasMessageContaining("nosuch");
    }

    @Test
    void afterClose_everyCallSaysTheNodeIsShuttingDown() {
        service.close(0);
        assertThatThrownBy(() -> service.hello("a:1")).hasMessageContaining("shutting down");
        assertThatThrownBy(() -> service.post("a:1", new byte[] {1})).hasMessageContaining("shutting down");
    }

    @Test
    void hello_namesThePeer() throws Exception {
        service.hello("a:1");
        assertThat(applied).containsExactly("hello a:1");
    }
}
