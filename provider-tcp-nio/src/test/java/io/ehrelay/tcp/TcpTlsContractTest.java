package io.ehrelay.tcp;

import java.nio.file.Path;

import io.ehrelay.contract.ReplicationContractTest;
import io.ehrelay.contract.TestKeyStores;
import io.ehrelay.contract.TransportFixture;

/**
 * The provider-api contract suite over TCP with {@code tls=true} (one key store, trusted by every node), and
 * {@code tlsClientAuth=false}: the suite checks that {@code unauthenticatedPeers} refuses hosts, which does not
 * apply to peers with client certificates ({@link TcpTlsTest} covers those).
 */
class TcpTlsContractTest extends ReplicationContractTest {

    private static final TransportFixture FIXTURE;

    static {
        try {
            Path store = TestKeyStores.selfSigned("tcp-contract", "ehrelay-contract", null);
            FIXTURE = TcpContractTest.FIXTURE.withExtraProviderProperties("tls=true, tlsKeyStore=" + store
                    + ", tlsKeyStorePassword=changeit, tlsTrustStore=" + store + ", tlsTrustStorePassword=changeit"
                    + ", tlsClientAuth=false");
        } catch (Exception e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
