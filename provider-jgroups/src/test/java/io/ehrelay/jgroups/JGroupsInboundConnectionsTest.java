package io.ehrelay.jgroups;

import java.io.IOException;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.InboundConnectionsContractTest;
import io.ehrelay.contract.TransportFixture;
import net.sf.ehcache.CacheManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The inbound-connection contract over JGroups' TCP stack. JGroups reads each new connection's header on its one
 * accepting thread, waiting for it, so the flood here sends the header and then stays silent: newcomers are
 * refused until one of the flood has been silent for the idle time (shortened to 2 s), then take its slot.
 */
class JGroupsInboundConnectionsTest extends InboundConnectionsContractTest {

    private static final AtomicInteger CLAIMED = new AtomicInteger(3000);
    private int idle;

    @BeforeEach
    void shortIdle() {
        idle = BoundedSocketFactory.idleMillis;
        BoundedSocketFactory.idleMillis = 2_000;
    }

    @AfterEach
    void restoreIdle() {
        BoundedSocketFactory.idleMillis = idle;
    }

    @Override
    protected TransportFixture fixture(int maxInboundConnections) {
        return JGroupsFixtures.tcp(", maxInboundConnections=" + maxInboundConnections);
    }

    @Override
    protected int port(ContractCluster cluster, CacheManager cm) {
        return JGroupsInboundBoundsTest.port(cluster, cm);
    }

    @Override
    protected Socket openSilent(int port) throws IOException {
        Socket s = new Socket();
        try {
            return JGroupsInboundBoundsTest.pastHeader(s, port, CLAIMED.incrementAndGet());
        } catch (IOException e) {
            s.close();
            throw e;
        }
    }
}
