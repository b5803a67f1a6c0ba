package io.ehrelay.jgroups;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.contract.TransportFixture;

/**
 * The JGroups transport as the contract suite sees it, on the loopback interface only: the UDP stack with
 * multicast bound to 127.0.0.1 and TTL 0, or the TCP stack with TCPPING over 127.0.0.1 ports. Each fixture gets
 * its own cluster name and ports, so concurrent or leftover nodes of other tests do not join. The channel finds
 * the members (no listener factory, no manual peers). The receiver holds 4 MiB per sender and the sender 16 MiB:
 * 4,000 events of 16 KiB overflow.
 */
final class JGroupsFixtures {

    private static final AtomicInteger CLUSTERS = new AtomicInteger();

    private JGroupsFixtures() {
    }

    static TransportFixture udp() {
        int port = 40000 + ThreadLocalRandom.current().nextInt(20000);
        return fixture("channelName=" + cluster() + ", bindAddress=127.0.0.1, multicastAddress=230.0.0."
                + (100 + ThreadLocalRandom.current().nextInt(100)) + ", multicastPort=" + port + ", timeToLive=0");
    }

    static TransportFixture tcp() {
        return tcp("");
    }

    /** The TCP stack with more provider properties ({@code ", name=value"...}). */
    static TransportFixture tcp(String more) {
        int base = 20000 + ThreadLocalRandom.current().nextInt(400) * 50;
        StringBuilder hosts = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            hosts.append(i == 0 ? "" : "|").append("127.0.0.1[").append(base + i).append(']');
        }
        return fixture("file=" + JGroupsStacks.TCP_STACK + ", channelName=" + cluster()
                + ", bindAddress=127.0.0.1, bindPort=" + base + ", initialHosts=" + hosts + more);
    }

    private static String cluster() {
        return "contract-" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
    }

    private static TransportFixture fixture(String channelProperties) {
        return TransportFixture.of(JGroupsSettings.SCHEME, JGroupsSettings.NAME,
                JGroupsCacheManagerPeerProviderFactory.class, null, JGroupsCacheReplicatorFactory.class,
                JGroupsBootstrapCacheLoaderFactory.class)
                .withAutomaticDiscovery(channelProperties)
                .withOverflow(16 * 1024, 4000);
    }
}
