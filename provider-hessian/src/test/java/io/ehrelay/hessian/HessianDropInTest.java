package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.contract.ContractCluster;
import net.sf.ehcache.CacheManager;

/** {@code ehcache.xml} files as users write them: a peer list with the wrong separator is refused at start. */
class HessianDropInTest {

    private static final String XML = "<ehcache name=\"%s\" updateCheck=\"false\" monitoring=\"off\">\n"
            + "  <cacheManagerPeerProviderFactory class=\"io.ehrelay.hessian.HessianCacheManagerPeerProviderFactory\"\n"
            + "      properties=\"%s\"/>\n"
            + "  <cacheManagerPeerListenerFactory class=\"io.ehrelay.hessian.HessianCacheManagerPeerListenerFactory\"\n"
            + "      properties=\"hostName=127.0.0.1, port=0\"/>\n"
            + "  <cache name=\"users\" maxEntriesLocalHeap=\"1000\">\n"
            + "    <cacheEventListenerFactory class=\"io.ehrelay.hessian.HessianCacheReplicatorFactory\"/>\n"
            + "  </cache>\n"
            + "</ehcache>\n";

    private static void start(String provider) {
        String xml = String.format(XML, ContractCluster.uniqueName("hessian-peers"), provider);
        new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8))).shutdown();
    }

    /**
     * After a comma, a URL arrives as an unknown property named "http" (the rest its value); after a space, one
     * entry holds two URLs. Both are refused, naming the separator.
     */
    @Test
    void peersSeparatedByASpace_orAComma_areRefused_namingTheSeparator() {
        assertThatThrownBy(() -> start("peerDiscovery=manual, "
                + "peers=http://127.0.0.1:40002/ehrelay http://127.0.0.1:40003/ehrelay"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay HessianCacheManagerPeerProviderFactory: peers: 'http://127.0.0.1:40002/ehrelay "
                        + "http://127.0.0.1:40003/ehrelay' holds a space; separate peers with '|' "
                        + "(peers=http://127.0.0.1:40002/ehrelay|http://127.0.0.1:40003/ehrelay)");
        assertThatThrownBy(() -> start("peerDiscovery=manual, "
                + "peers=http://127.0.0.1:40002/ehrelay, http://127.0.0.1:40003/ehrelay"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay HessianCacheManagerPeerProviderFactory: peers: 'http://127.0.0.1:40003/ehrelay' "
                        + "follows a comma, and Ehcache splits the properties attribute on commas (it arrived as an "
                        + "unknown property 'http'); separate peers with '|' "
                        + "(peers=http://127.0.0.1:40002/ehrelay|http://127.0.0.1:40003/ehrelay)");
    }
}
