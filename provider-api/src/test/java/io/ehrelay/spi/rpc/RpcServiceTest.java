package io.ehrelay.spi.rpc;

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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.ehrelay.contract.Await;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.testing.ManualClock;

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
