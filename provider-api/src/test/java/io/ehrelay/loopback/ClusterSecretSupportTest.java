package io.ehrelay.loopback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.spi.ClusterSecret;
import org.junit.jupiter.api.Test;

/**
 * {@code clusterSecret} with a transport that does not prove it (the loopback transport, as RMI and Hessian
 * for now): the node refuses to start, saying so, rather than run without the authentication asked for.
 */
class ClusterSecretSupportTest {

    @Test
    void aTransportThatCannotProveTheSecret_refusesToStart() {
        try (ContractCluster cluster = new ContractCluster(LoopbackContractTest.FIXTURE)) {
            assertThatThrownBy(() -> cluster.start("secret", "clusterSecret=a-secret-of-enough-length"))
                    .isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("'clusterSecret' is not supported by the loopback transport yet")
                    .hasMessageNotContaining("a-secret-of-enough-length");
        }
    }

    @Test
    void proofs_dependOnTheSecretTheLabelAndEveryPart() {
        ClusterSecret s = ClusterSecret.of("a-secret-of-enough-length");
        byte[] n1 = ClusterSecret.nonce();
        byte[] n2 = ClusterSecret.nonce();
        byte[] proof = s.proof("client", n1, n2);
        assertThat(proof).hasSize(ClusterSecret.PROOF_BYTES);
        assertThat(s.verifies(proof, "client", n1, n2)).isTrue();
        assertThat(s.verifies(proof, "server", n1, n2)).as("another label").isFalse();
        assertThat(s.verifies(proof, "client", n2, n1)).as("nonces swapped").isFalse();
        assertThat(ClusterSecret.of("another-secret-of-length").verifies(proof, "client", n1, n2)).isFalse();
        assertThat(n1).isNotEqualTo(n2);
        assertThat(s.toString()).doesNotContain("a-secret");
        assertThatThrownBy(() -> ClusterSecret.of("short")).isInstanceOf(IllegalArgumentException.class);
    }
}
