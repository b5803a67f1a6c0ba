package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;

import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class SendRoundTest {

    private final Transport transport = mock(Transport.class);
    private final Peer ok = new Peer("ok:1");
    private final Peer failing = new Peer("failing:2");
    private final Peer throwing = new Peer("throwing:3");
    private final Peer silent = new Peer("silent:4");
    private final Batch batch = new Batch(new byte[] {1, 2, 3}, 1);

    @Test
    void everyPeerIsSent_theSameBatch_andEachOutcomeIsReportedInOrder() throws Exception {
        CompletableFuture<Void> failed = new CompletableFuture<>();
        failed.completeExceptionally(new IOException("connection refused"));
        when(transport.send(eq(ok), any(), anyBoolean())).thenReturn(CompletableFuture.completedFuture(null));
        when(transport.send(eq(failing), any(), anyBoolean())).thenReturn(failed);
        when(transport.send(eq(throwing), any(), anyBoolean())).thenThrow(new IllegalStateException("stopped"));
        when(transport.send(eq(silent), any(), anyBoolean())).thenReturn(new CompletableFuture<>());

        SendRound round = SendRound.start(transport, Arrays.asList(ok, failing, throwing, silent), batch, true);
        List<String> outcomes = new ArrayList<>();
        round.settle(() -> 50, (peer, failure) -> outcomes.add(peer + "=" + (failure == null ? "ok"
                : failure.getClass().getSimpleName() + ":" + failure.getMessage())));

        assertThat(outcomes).containsExactly("ok:1=ok", "failing:2=IOException:connection refused",
                "throwing:3=IllegalStateException:stopped", "silent:4=TimeoutException:no answer within 50 ms");
    }

    @Test
    void aPeerThatDoesNotAnswer_hasItsSendCancelled() throws Exception {
        CompletableFuture<Void> pending = new CompletableFuture<>();
        when(transport.send(eq(silent), any(), anyBoolean())).thenReturn(pending);
        SendRound.start(transport, Arrays.asList(silent), batch, false).settle(() -> 1, (p, f) ->
                assertThat(f).isInstanceOf(TimeoutException.class));
        assertThat(pending).isCancelled();
    }

    @Test
    void patienceIsAskedPerPeer_andNeverBelowOneMillisecond() throws Exception {
        when(transport.send(any(), any(), anyBoolean())).then(call -> new CompletableFuture<Void>());
        List<Long> asked = new ArrayList<>();
        long[] left = {3};
        SendRound.start(transport, Arrays.asList(ok, silent), batch, true).settle(() -> {
            asked.add(left[0]);
            return left[0]--;
        }, (p, f) -> assertThat(f).hasMessageContaining("no answer within"));
        assertThat(asked).containsExactly(3L, 2L);
        List<String> messages = new ArrayList<>();
        SendRound.start(transport, Arrays.asList(ok), batch, true).settle(() -> -5,
                (p, f) -> messages.add(f.getMessage()));
        assertThat(messages).containsExactly("no answer within 1 ms");
    }

    @Test
    void aFutureTheTransportCancelled_isAFailure_notAnException() throws Exception {
        CompletableFuture<Void> cancelled = new CompletableFuture<>();
        cancelled.cancel(false);
        when(transport.send(any(), any(), anyBoolean())).thenReturn(cancelled);
        List<Throwable> failures = new ArrayList<>();
        SendRound.start(transport, Arrays.asList(ok), batch, true).settle(() -> 10, (p, f) -> failures.add(f));
        assertThat(failures).singleElement().isInstanceOf(CancellationException.class);
    }

    @Test
    void describe_namesTheFailureInOneLine() {
        assertThat(SendRound.describe(new IOException("reset"))).isEqualTo("IOException: reset");
        assertThat(SendRound.describe(new TimeoutException())).isEqualTo("TimeoutException");
    }
}
