package io.ehrelay.rmi;

import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.InboundConnectionsContractTest;
import io.ehrelay.contract.TransportFixture;
import net.sf.ehcache.CacheManager;

/**
 * The inbound-connection contract over RMI, on the registry's port (the relay's and the cache peers' share the
 * bound): connections that never send the JRMP header give their slots to newcomers.
 */
class RmiInboundConnectionsTest extends InboundConnectionsContractTest {

    @Override
    protected TransportFixture fixture(int maxInboundConnections) {
        return RmiContractTest.FIXTURE.withListenerProperties(RmiContractTest.FIXTURE.listenerProperties()
                + ", maxInboundConnections=" + maxInboundConnections);
    }

    @Override
    protected int port(ContractCluster cluster, CacheManager cm) {
        return RmiUrls.port(cluster.endpoint(cm));
    }
}
