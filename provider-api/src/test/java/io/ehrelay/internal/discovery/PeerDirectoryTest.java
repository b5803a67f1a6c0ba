package io.ehrelay.internal.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import io.ehrelay.spi.Peer;
import org.junit.jupiter.api.Test;

class PeerDirectoryTest {

    private final PeerDirectory directory = new PeerDirectory(Arrays.asList("a:1", "b:2"), 5000);
    private final List<List<String>> changes = new ArrayList<>();

    private List<String> peers() {
        return directory.peers().stream().map(Peer::endpoint).collect(Collectors.toList());
    }

    @Test
    void manualPeers_minusThisNode() {
        directory.setSelf("b:2");
        assertThat(peers()).containsExactly("a:1");
    }

    @Test
    void registeredPeers_joinAndLeave_andEachChangeIsAnnouncedOnce() {
        directory.onChange(now -> changes.add(now.stream().map(Peer::endpoint).collect(Collectors.toList())));
        directory.register("c:3");
        directory.register("c:3");
        directory.unregister("a:1");
        directory.unregister("nobody:9");
        assertThat(peers()).containsExactly("b:2", "c:3");
        assertThat(changes).containsExactly(Arrays.asList("a:1", "b:2"), Arrays.asList("a:1", "b:2", "c:3"),
                Arrays.asList("b:2", "c:3"));
    }

    @Test
    void discoveredPeers_expireWhenTheirHeartbeatsStop() {
        long t0 = TimeUnit.HOURS.toNanos(1);
        directory.heard("d:4", t0);
        directory.heard("e:5", t0);
        directory.expire(t0 + TimeUnit.MILLISECONDS.toNanos(4000));
        assertThat(peers()).contains("d:4", "e:5");
        directory.heard("e:5", t0 + TimeUnit.MILLISECONDS.toNanos(4000));
        directory.expire(t0 + TimeUnit.MILLISECONDS.toNanos(5001));
        assertThat(peers()).containsExactly("a:1", "b:2", "e:5");
    }

    @Test
    void manualPeers_neverExpire() {
        directory.expire(Long.MAX_VALUE);
        assertThat(peers()).containsExactly("a:1", "b:2");
    }

    @Test
    void aTransportsMemberList_replacesTheOneBefore() {
        directory.replacePeers(Arrays.asList("m:1", "m:2"));
        directory.replacePeers(Arrays.asList("m:2", "m:3"));
        assertThat(peers()).containsExactly("a:1", "b:2", "m:2", "m:3");
    }

    /**
     * A listener installed while the transport reports a member (a JGroups view arriving as the node starts) last
     * hears the directory's latest list: before, it could be handed the list from before the change after that
     * change was announced, and kept forgetting the member until the next change.
     */
    @Test
    void aListenerInstalledDuringAChange_endsWithTheLatestList() throws Exception {
        int stale = 0;
        for (int round = 0; round < 2000; round++) {
            PeerDirectory d = new PeerDirectory(Arrays.asList("a:1"), 5000);
            AtomicReference<List<Peer>> last = new AtomicReference<>();
            CyclicBarrier start = new CyclicBarrier(2);
            Thread view = new Thread(() -> {
                await(start);
                d.replacePeers(Arrays.asList("m:" + 1, "m:" + 2));
            });
            view.start();
            await(start);
            d.onChange(last::set);
            view.join();
            if (!last.get().equals(d.peers())) {
                stale++;
            }
        }
        assertThat(stale).as("rounds whose listener last heard a list older than the directory's").isZero();
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
