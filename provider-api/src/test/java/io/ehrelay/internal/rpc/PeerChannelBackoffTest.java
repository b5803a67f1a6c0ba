package io.ehrelay.internal.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.Executors;

import io.ehrelay.spi.InboundHandler;
import io.ehrelay.testing.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The request/response channel's backoff, driven by a {@link ManualClock}: no sockets, no sleeping. */
class PeerChannelBackoffTest {

    private static final InboundHandler.ChunkSink IGNORE = chunk -> { };

    private final ManualClock clock = new ManualClock();
    private final FakeChannel channel = new FakeChannel(clock);

    @AfterEach
    void close() {
        channel.close(0);
    }

    private void fetch() throws Exception {
        channel.fetchState("c", 1024, IGNORE);
    }

    @Test
    void unreachablePeer_isNotTriedAgainBeforeTheBackoffHasPassed() {
        assertThatThrownBy(this::fetch).isInstanceOf(ConnectException.class);
        assertThat(channel.connects).isEqualTo(1);
        assertThat(channel.isReachable()).isFalse();

        assertThatThrownBy(this::fetch).hasMessageContaining("next attempt in 100 ms");
        clock.advanceMillis(99);
        assertThatThrownBy(this::fetch).hasMessageContaining("next attempt in 1 ms");
        assertThat(channel.connects).isEqualTo(1);

        clock.advanceMillis(1);
        assertThatThrownBy(this::fetch).isInstanceOf(ConnectException.class);
        assertThat(channel.connects).isEqualTo(2);
        assertThatThrownBy(this::fetch).hasMessageContaining("next attempt in 200 ms");
    }

    @Test
    void backoff_doublesUpToRetryMaxMillis() {
        long[] waits = {100, 200, 400, 500, 500};
        for (long wait : waits) {
            assertThatThrownBy(this::fetch).isInstanceOf(ConnectException.class);
            assertThatThrownBy(this::fetch).hasMessageContaining("next attempt in " + wait + " ms");
            clock.advanceMillis(wait);
        }
        assertThat(channel.connects).isEqualTo(waits.length);
    }

    @Test
    void retryNow_triesAtOnce() {
        assertThatThrownBy(this::fetch).isInstanceOf(ConnectException.class);
        channel.retryNow();
        assertThatThrownBy(this::fetch).isInstanceOf(ConnectException.class);
        assertThat(channel.connects).isEqualTo(2);
        assertThatThrownBy(this::fetch).hasMessageContaining("next attempt in 200 ms");
    }

    @Test
    void success_resetsTheBackoff_andAPeerGoneFailureStartsItAgainAtTheInitialDelay() throws Exception {
        assertThatThrownBy(this::fetch).isInstanceOf(ConnectException.class);
        clock.advanceMillis(100);
        assertThatThrownBy(this::fetch).isInstanceOf(ConnectException.class);
        channel.up = true;
        clock.advanceMillis(200);
        fetch();
        assertThat(channel.isReachable()).isTrue();

        channel.transferFailure = new ConnectException("gone");
        assertThatThrownBy(this::fetch).hasMessage("gone");
        assertThat(channel.disconnects).isEqualTo(3);
        assertThat(channel.isReachable()).isFalse();
        assertThatThrownBy(this::fetch).hasMessageContaining("next attempt in 100 ms");
    }

    /**
     * While the backoff lasts, every refusal says why the last attempt failed (it may have been made ahead of any
     * send, where nobody heard it), without repeating the peer's name.
     */
    @Test
    void theBackoffsRefusal_saysWhyTheLastAttemptFailed() {
        assertThatThrownBy(this::fetch).hasMessage("refused");
        assertThatThrownBy(this::fetch).hasMessage("peer fake:1 unreachable (java.net.ConnectException: refused); "
                + "next attempt in 100 ms");
        channel.connectFailure = new RpcException("peer fake:1 answered 404: no ehrelay listener at that path");
        clock.advanceMillis(100);
        assertThatThrownBy(this::fetch).isInstanceOf(RpcException.class);
        assertThatThrownBy(this::fetch).hasMessage("peer fake:1 unreachable (answered 404: no ehrelay listener at "
                + "that path); next attempt in 200 ms");
    }

    /** A channel whose peer is down until told otherwise. */
    private static final class FakeChannel extends PeerChannel {
        volatile boolean up;
        volatile Exception transferFailure;
        volatile Exception connectFailure;
        int connects;
        int disconnects;

        FakeChannel(ManualClock clock) {
            super("fake:1", 1 << 20, 500, Executors.defaultThreadFactory(), clock);
        }

        @Override
        protected void connect() throws Exception {
            connects++;
            if (!up) {
                throw connectFailure != null ? connectFailure : new ConnectException("refused");
            }
        }

        @Override
        protected void transmit(byte[] batch, boolean acknowledge) {
            // not used here
        }

        @Override
        protected void transferState(String cacheName, int maxChunkBytes, InboundHandler.ChunkSink sink)
                throws Exception {
            Exception e = transferFailure;
            if (e != null) {
                throw e;
            }
        }

        @Override
        protected boolean peerGone(Exception failure) {
            return failure instanceof IOException;
        }

        @Override
        protected void disconnect() {
            disconnects++;
        }
    }
}
