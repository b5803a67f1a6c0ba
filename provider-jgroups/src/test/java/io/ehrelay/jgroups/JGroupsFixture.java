package io.ehrelay.jgroups;

import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.contract.TransportFixture;

/**
 * The JGroups transport as the contract suite sees it, on the loopback interface only: the UDP stack with
 * multicast bound to 127.0.0.1 and TTL 0, or the TCP stack with TCPPING over 127.0.0.1 ports. Each fixture gets
 * its own cluster name and ports, so concurrent or leftover nodes of other tests do not join.
 */
class JGroupsFixture implements TransportFixture {

    private static final AtomicInteger CLUSTERS = new AtomicInteger();

    private final boolean tcp;
    private final String properties;

    private JGroupsFixture(boolean tcp) {
        this.tcp = tcp;
        String cluster = "contract-" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
        if (tcp) {
            int base = 20000 + ThreadLocalRandom.current().nextInt(400) * 50;
            StringBuilder hosts = new StringBuilder();
            for (int i = 0; i < 6; i++) {
                hosts.append(i == 0 ? "" : "|").append("127.0.0.1[").append(base + i).append(']');
            }
            properties = "file=" + JGroupsStacks.TCP_STACK + ", channelName=" + cluster
                    + ", bindAddress=127.0.0.1, bindPort=" + base + ", initialHosts=" + hosts;
        } else {
            int port = 40000 + ThreadLocalRandom.current().nextInt(20000);
            properties = "channelName=" + cluster + ", bindAddress=127.0.0.1, multicastAddress=230.0.0."
                    + (100 + ThreadLocalRandom.current().nextInt(100)) + ", multicastPort=" + port
                    + ", timeToLive=0";
        }
    }

    static JGroupsFixture udp() {
        return new JGroupsFixture(false);
    }

    static JGroupsFixture tcp() {
        return new JGroupsFixture(true);
    }

    boolean isTcp() {
        return tcp;
    }

    @Override
    public String providerFactory() {
        return JGroupsCacheManagerPeerProviderFactory.class.getName();
    }

    @Override
    public String listenerFactory() {
        return null;
    }

    @Override
    public String replicatorFactory() {
        return JGroupsCacheReplicatorFactory.class.getName();
    }

    @Override
    public String bootstrapFactory() {
        return JGroupsBootstrapCacheLoaderFactory.class.getName();
    }

    @Override
    public String scheme() {
        return JGroupsSettings.SCHEME;
    }

    @Override
    public String transportName() {
        return JGroupsSettings.NAME;
    }

    @Override
    public boolean manualDiscovery() {
        return false;
    }

    @Override
    public String extraProviderProperties() {
        return properties;
    }

    /** The receiver holds 4 MiB per sender and the sender 16 MiB: 4,000 events of 16 KiB overflow. */
    @Override
    public int overflowValueBytes() {
        return 16 * 1024;
    }

    @Override
    public int overflowEventCount() {
        return 4000;
    }
}
