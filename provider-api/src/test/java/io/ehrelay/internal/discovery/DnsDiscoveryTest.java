package io.ehrelay.internal.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import io.ehrelay.contract.Await;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.Peer;
import org.junit.jupiter.api.Test;

/**
 * {@code peerDiscovery=dns} against a resolver standing in for DNS (the one edge replaced: the suite sends no
 * query anywhere); the real lookups run in the container suites, against Docker's embedded DNS.
 */
class DnsDiscoveryTest {

    private static final int OWN_PORT = 40001;

    private final AtomicReference<Object> answer = new AtomicReference<>(Collections.emptyList());
    private final PeerDirectory directory = new PeerDirectory(Collections.emptyList(), 60_000);

    private final DnsDiscovery.Resolver resolver = name -> {
        Object a = answer.get();
        if (a instanceof IOException) {
            throw (IOException) a;
        }
        @SuppressWarnings("unchecked")
        List<DnsDiscovery.Target> targets = (List<DnsDiscovery.Target>) a;
        return targets;
    };

    private DnsDiscovery discovery(int port) {
        return new DnsDiscovery("peers.test", port, 100, resolver, directory, (h, p) -> h + ":" + p, Thread::new, Clock.SYSTEM);
    }

    private static List<DnsDiscovery.Target> answers(String... hostPorts) {
        List<DnsDiscovery.Target> out = new ArrayList<>();
        for (String hp : hostPorts) {
            int colon = hp.lastIndexOf(':');
            out.add(colon < 0 ? new DnsDiscovery.Target(hp, 0)
                    : new DnsDiscovery.Target(hp.substring(0, colon), Integer.parseInt(hp.substring(colon + 1))));
        }
        return out;
    }

    private List<String> peers() {
        return directory.peers().stream().map(Peer::endpoint).collect(Collectors.toList());
    }

    @Test
    void everyAnswerIsAPeer_atTheNodesOwnPort_butThisNodeItself() {
        DnsDiscovery d = discovery(0);
        // 127.0.0.1 at the node's own port is this node; the documentation range is another host's
        answer.set(answers("192.0.2.10", "192.0.2.11", "127.0.0.1"));
        d.lookUp(OWN_PORT);
        assertThat(peers()).containsExactlyInAnyOrder("192.0.2.10:40001", "192.0.2.11:40001");
    }

    @Test
    void aConfiguredPortIsUsedForAddresses_andSrvAnswersCarryTheirOwn() {
        DnsDiscovery d = discovery(40100);
        // an SRV answer names each member's port: another node on this host at another port is a peer
        answer.set(answers("192.0.2.10", "127.0.0.1:40002", "127.0.0.1:40001"));
        d.lookUp(OWN_PORT);
        assertThat(peers()).containsExactlyInAnyOrder("192.0.2.10:40100", "127.0.0.1:40002");
    }

    @Test
    void aMemberThatLeavesTheAnswerLeavesTheList_aMissingNameMeansNone_aFailedLookupKeepsThem() {
        DnsDiscovery d = discovery(0);
        answer.set(answers("192.0.2.10", "192.0.2.11"));
        d.lookUp(OWN_PORT);
        answer.set(answers("192.0.2.11", "192.0.2.12"));
        d.lookUp(OWN_PORT);
        assertThat(peers()).containsExactlyInAnyOrder("192.0.2.11:40001", "192.0.2.12:40001");

        answer.set(new IOException("timed out"));
        d.lookUp(OWN_PORT);
        assertThat(peers()).as("a lookup that failed is no answer").containsExactlyInAnyOrder("192.0.2.11:40001",
                "192.0.2.12:40001");

        answer.set(new DnsDiscovery.NoSuchName("peers.test"));
        d.lookUp(OWN_PORT);
        assertThat(peers()).as("NXDOMAIN: no member is up").isEmpty();
    }

    @Test
    void manualPeersStayWhateverTheNameAnswers() {
        PeerDirectory withManual = new PeerDirectory(List.of("192.0.2.99:40001"), 60_000);
        DnsDiscovery d = new DnsDiscovery("peers.test", 0, 100, resolver, withManual, (h, p) -> h + ":" + p,
                Thread::new, Clock.SYSTEM);
        answer.set(answers("192.0.2.10"));
        d.lookUp(OWN_PORT);
        answer.set(new DnsDiscovery.NoSuchName("peers.test"));
        d.lookUp(OWN_PORT);
        assertThat(withManual.peers()).extracting(Peer::endpoint).containsExactly("192.0.2.99:40001");
    }

    @Test
    void startLooksUpAtOnce_thenEveryInterval_untilStopped() throws InterruptedException {
        answer.set(answers("192.0.2.10"));
        List<Thread> started = new ArrayList<>();
        DnsDiscovery d = new DnsDiscovery("peers.test", 0, 100, resolver, directory, (h, p) -> h + ":" + p, r -> {
            Thread t = new Thread(r, "dns-test");
            started.add(t);
            return t;
        }, Clock.SYSTEM);
        d.start(OWN_PORT);
        try {
            assertThat(peers()).as("known when start returns").containsExactly("192.0.2.10:40001");
            answer.set(answers("192.0.2.10", "192.0.2.20"));
            Await.until(() -> peers().contains("192.0.2.20:40001"), () -> "not looked up again: " + peers());
        } finally {
            d.stop();
        }
        started.get(0).join(5000);
        assertThat(started.get(0).isAlive()).as("the lookup thread ends at stop").isFalse();
    }
}
