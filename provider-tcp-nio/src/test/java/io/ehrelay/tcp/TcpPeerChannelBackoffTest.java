package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.metrics.ReplicationMetrics;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.ListenerConfig;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.PeerGate;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.testing.ManualClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The TCP sender's reconnect backoff towards a closed port on 127.0.0.1, driven by a {@link ManualClock}. */
@Timeout(30)
class TcpPeerChannelBackoffTest {

    private final ManualClock clock = new ManualClock();
    private final ReplicationMetrics metrics = new ReplicationMetrics("tcp-backoff-test", "tcp");
    private TcpPeerChannel channel;

    @AfterEach
    void close() {
        if (channel != null) {
            channel.close();
        }
    }

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** A state request: the cheapest frame to queue. Returns its failure. */
    private Throwable attempt() throws Exception {
        CompletableFuture<Void> f = channel.requestState("c", 1024, chunk -> { });
        try {
            f.get(10, TimeUnit.SECONDS);
            throw new AssertionError("a closed port answered");
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    private long connectFailures() {
        return metrics.meter("connectFailures").getCount();
    }

    @Test
    void refusedConnects_backOffFrom100msDoublingToRetryMaxMillis() throws Exception {
        channel = new TcpPeerChannel(new Peer("127.0.0.1:" + closedPort()),
                new TcpSettings(2000, 500, 1 << 20, 64, 0), context(), null, clock);

        assertThat(attempt()).isInstanceOf(ConnectException.class);
        assertThat(connectFailures()).isEqualTo(1);
        assertThat(attempt()).hasMessageContaining("next attempt in 100 ms");
        clock.advanceMillis(60);
        assertThat(attempt()).hasMessageContaining("next attempt in 40 ms");
        assertThat(connectFailures()).isEqualTo(1);

        long[] waits = {200, 400, 500, 500};
        clock.advanceMillis(40);
        for (long wait : waits) {
            assertThat(attempt()).isInstanceOf(ConnectException.class).hasMessageNotContaining("next attempt");
            assertThat(attempt()).hasMessageContaining("next attempt in " + wait + " ms");
            clock.advanceMillis(wait);
        }
        assertThat(connectFailures()).isEqualTo(1 + waits.length);
    }

    @Test
    void retryNow_endsTheWaitAtOnce() throws Exception {
        channel = new TcpPeerChannel(new Peer("127.0.0.1:" + closedPort()),
                new TcpSettings(2000, 5000, 1 << 20, 64, 0), context(), null, clock);
        attempt();
        assertThat(attempt()).hasMessageContaining("next attempt in 100 ms");
        channel.retryNow();
        assertThat(attempt()).hasMessageNotContaining("next attempt");
        assertThat(connectFailures()).isEqualTo(2);
        assertThat(attempt()).hasMessageContaining("next attempt in 200 ms");
    }

    private TransportContext context() {
        return new TransportContext() {
            @Override
            public InboundHandler inbound() {
                throw new UnsupportedOperationException();
            }

            @Override
            public ThreadFactory threads(String role) {
                return r -> {
                    Thread t = new Thread(r, "test-" + role);
                    t.setDaemon(true);
                    return t;
                };
            }

            @Override
            public int maxFrameBytes() {
                return CodecLimits.DEFAULT_MAX_FRAME_BYTES;
            }

            @Override
            public ListenerConfig listener() {
                return null;
            }

            @Override
            public ReplicationMetrics metrics() {
                return metrics;
            }

            @Override
            public PeerGate peerGate() {
                return (address, what) -> true;
            }

            @Override
            public String cacheManagerName() {
                return "tcp-backoff-test";
            }

            @Override
            public void setPeers(Collection<String> endpoints) {
            }

            @Override
            public void resyncFrom(String peerEndpoint) {
            }
        };
    }
}
