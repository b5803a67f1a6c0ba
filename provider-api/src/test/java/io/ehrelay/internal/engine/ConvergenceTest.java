package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.AdditionalAnswers.returnsFirstArg;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.ArgumentMatchers.eq;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.timeout;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.contract.Await;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.event.CacheEventListener;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ConvergenceTest {

    private final EngineTestKit kit = new EngineTestKit();
    private final Transport transport = mock(Transport.class);
    private final AtomicInteger markedLost = new AtomicInteger();
    private final Peer peer = new Peer("m:5");
    private final List<Peer> peers = Collections.singletonList(peer);
    private final CacheBindings caches = new CacheBindings(kit.cacheManager, kit.metrics,
            (CacheEventListener l) -> false);
    private Convergence convergence;
    private boolean stopped;

    private void node(String localEndpoint) {
        when(transport.localEndpoint()).thenReturn(localEndpoint);
        when(transport.normalizePeer(anyString())).then(returnsFirstArg());
        when(transport.peerOf(anyString())).then(returnsFirstArg());
        when(transport.requestState(any(), anyString(), anyInt(), any()))
                .thenReturn(CompletableFuture.completedFuture(null));
        Membership membership = new Membership(kit.cacheManager.getName(), transport, caches::liveReplicatedCaches,
                Clock.SYSTEM);
        caches.bind("a");
        StateTransfer st = new StateTransfer(kit.cacheManager.getName(), caches, transport, kit.metrics,
                kit.config.limits(), () -> peers, () -> null,
                new Invalidations(kit.metrics, kit.config.limits().allowList(), kit.warn), () -> stopped,
                Executors.defaultThreadFactory(), kit.warn, Clock.SYSTEM, new Ordering(Clock.SYSTEM, 600_000, kit.warn),
                membership);
        convergence = new Convergence(kit.cacheManager.getName(), transport, () -> peers, kit.metrics, caches,
                () -> true, markedLost::incrementAndGet, membership, st);
    }

    @AfterEach
    void close() {
        stopped = true;
        kit.close();
    }

    @Test
    void aNodeThatMissedEvents_resyncsFromThePeer() {
        node("z:9");
        convergence.behind("m:5", 3, false);
        verify(transport, timeout(10_000)).requestState(eq(peer), eq("a"), anyInt(), any());
        assertThat(kit.metrics.meter("gaps").getCount()).isEqualTo(1);
        assertThat(markedLost).hasValue(0);
    }

    @Test
    void bothSidesMissedEachOther_eachPullsFromTheOther_keyByKey() {
        for (String self : new String[] {"a:1", "z:9"}) {
            org.mockito.Mockito.reset(transport);
            markedLost.set(0);
            node(self);
            convergence.owe(peer);
            convergence.behind("m:5", 1, false);
            assertThat(markedLost).as("the peer is told to pull from this node").hasValue(1);
            verify(transport, timeout(10_000)).requestState(eq(peer), eq("a"), anyInt(), any());
            assertThat(convergence.owes("m:5")).isFalse();
        }
    }

    @Test
    void aPeerKnownUnderAnotherName_withAnyDebt_countsAsMutual() {
        node("a:1");
        convergence.owe(new Peer("m-by-proxy:7"));
        convergence.behind("m:5-through-nat", 1, false);
        assertThat(markedLost).hasValue(1);
        assertThat(convergence.owes("m-by-proxy:7")).isFalse();
    }

    @Test
    void resyncsAreCounted_whenTheyComplete() {
        node("z:9");
        convergence.resyncFrom("m:5");
        Await.until(() -> kit.metrics.meter("resyncs").getCount() == 1, () -> "no resync");
        assertThat(kit.metrics.meter("resyncFailures").getCount()).isZero();
    }
}
