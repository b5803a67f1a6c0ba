package io.ehrelay.tcp;

import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.InboundConnectionsContractTest;
import io.ehrelay.contract.TransportFixture;
import net.sf.ehcache.CacheManager;

/** The inbound-connection contract over TCP: connections that never say HELLO give their slots to newcomers. */
class TcpInboundConnectionsTest extends InboundConnectionsContractTest {

    @Override
    protected TransportFixture fixture(int maxInboundConnections) {
        return TcpContractTest.FIXTURE.withExtraProviderProperties("maxInboundConnections=" + maxInboundConnections);
    }

    @Override
    protected int port(ContractCluster cluster, CacheManager cm) {
        String endpoint = cluster.endpoint(cm);
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }
}
