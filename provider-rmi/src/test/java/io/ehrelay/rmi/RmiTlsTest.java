package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.rmi.RemoteException;
import java.rmi.registry.LocateRegistry;
import java.util.List;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import io.ehrelay.contract.TestKeyStores;
import io.ehrelay.contract.TransportFixture;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code tls=true}: registry, relay and cache peers listen with TLS and demand a client certificate. Two TLS
 * nodes replicate; a plain client can neither look anything up nor change a cache.
 */
@Timeout(120)
class RmiTlsTest {

    private static Path keyStore;

    @BeforeAll
    static void keyStore() throws Exception {
        keyStore = TestKeyStores.selfSigned("node", "ehrelay-test", null);
    }

    private static TransportFixture tlsFixture() {
        return RmiContractTest.FIXTURE.withExtraProviderProperties("tls=true, tlsKeyStore=" + keyStore.toAbsolutePath()
                + ", tlsKeyStorePassword=changeit, tlsTrustStore=" + keyStore.toAbsolutePath()
                + ", tlsTrustStorePassword=changeit");
    }

    @Test
    void tlsNodesReplicate_plainClientsCannotLookUpOrWrite() throws Exception {
        try (ContractCluster tls = new ContractCluster(tlsFixture());
             ContractCluster plain = new ContractCluster(RmiContractTest.FIXTURE)) {
            CacheManager a = tls.start("tls-a");
            CacheManager b = tls.start("tls-b");
            a.getCache("sync").put(new Element("k", "over-tls"));
            assertThat(b.getCache("sync").get("k").getObjectValue()).isEqualTo("over-tls");
            b.getCache("async").put(new Element("k2", "back"));
            Await.until(() -> a.getCache("async").get("k2") != null, () -> "async over TLS");

            String endpoint = tls.endpoint(a);
            assertThatThrownBy(() -> LocateRegistry.getRegistry(RmiUrls.host(endpoint), RmiUrls.port(endpoint))
                    .list()).isInstanceOf(RemoteException.class);

            CacheManager intruder = plain.start("intruder", "rmiUrls=" + endpoint);
            intruder.getCache("async").put(new Element("evil", "x"));
            Jmx jmx = plain.jmx(intruder);
            Await.until(() -> jmx.cacheCount("async", "failed") >= 1, () -> "the plain node's send fails");
            assertThat(a.getCache("async").get("evil")).isNull();
            assertThat(List.of(a.getCache("async").getKeys().toArray())).doesNotContain("evil");
        }
    }
}
