package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.spi.ClusterSecret;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code clusterSecret} on TCP, with real nodes on 127.0.0.1 (where, without a secret, every local process would
 * be admitted): only nodes that prove the same secret replicate; one with another secret or none is refused and
 * counted in {@code unauthorized}; a recorded handshake does not open another connection.
 */
@Timeout(90)
class TcpClusterSecretTest {

    private static final String SECRET = "clusterSecret=correct-horse-battery-staple";
    private final ContractCluster cluster = new ContractCluster(TcpContractTest.FIXTURE);

    @AfterEach
    void stop() {
        cluster.close();
    }

    @Test
    void nodesWithTheSameSecret_replicate_bothWays() {
        CacheManager a = cluster.start("a", SECRET);
        CacheManager b = cluster.start("b", SECRET);
        a.getCache("async").put(new Element("k", "from a"));
        b.getCache("async").put(new Element("j", "from b"));
        Await.until(() -> b.getCache("async").get("k") != null && a.getCache("async").get("j") != null,
                () -> "replication between nodes holding the same secret");
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isZero();
        assertThat(cluster.jmx(b).managerCount("unauthorized")).isZero();
    }

    @Test
    void aSecretFromAFile_isTheSameSecret(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("secret");
        Files.write(file, "correct-horse-battery-staple\n".getBytes(StandardCharsets.UTF_8));
        CacheManager a = cluster.start("a", SECRET);
        CacheManager b = cluster.start("b", "clusterSecret=file:" + file);
        b.getCache("async").put(new Element("k", "v"));
        Await.until(() -> a.getCache("async").get("k") != null, () -> "replication with the secret from a file");
    }

    @Test
    void aNodeWithAnotherSecret_orNone_isRefusedAndCounted_andNothingOfItIsApplied() {
        CacheManager a = cluster.start("a", SECRET);
        CacheManager wrong = cluster.start("wrong", "clusterSecret=another-secret-of-16-chars");
        CacheManager none = cluster.start("none", "");
        for (int i = 0; i < 20; i++) {
            wrong.getCache("async").put(new Element("w" + i, "v"));
            none.getCache("async").put(new Element("n" + i, "v"));
        }
        Await.until(() -> cluster.jmx(a).managerCount("unauthorized") >= 2,
                () -> "refusals counted: " + cluster.jmx(a).managerCount("unauthorized"));
        // the node with another secret finds out in the handshake, before sending (the node without one sends
        // until it reads the challenge and closes: asynchronous TCP counts what the kernel took as sent)
        Await.until(() -> cluster.jmx(wrong).managerCount("failed") > 0,
                () -> "the node with another secret counts its sends as failed");
        assertThat(a.getCache("async").getSize()).as("elements applied from refused nodes").isZero();
        // the secret-holding node does not send to them either: it cannot verify them
        a.getCache("async").put(new Element("secret", "v"));
        Await.until(() -> cluster.jmx(a).managerCount("failed") > 0, () -> "a's sends to unproven peers fail");
        assertThat(wrong.getCache("async").get("secret")).isNull();
        assertThat(none.getCache("async").get("secret")).isNull();
    }

    @Test
    void aRecordedHandshake_doesNotOpenAnotherConnection() throws Exception {
        CacheManager a = cluster.start("a", SECRET);
        InetSocketAddress address = TcpWire.address(cluster.endpoint(a));
        ClusterSecret secret = ClusterSecret.of("correct-horse-battery-staple");
        byte[] hello = "recorder:1".getBytes(StandardCharsets.UTF_8);
        byte[] recordedAuth;
        try (Socket s = new Socket()) {
            s.connect(address, 2000);
            s.setSoTimeout(5000);
            s.getOutputStream().write(TcpWire.frame(Frames.Type.HELLO, hello));
            byte[] challenge = readFrame(s.getInputStream(), Frames.Type.CHALLENGE);
            byte[] nonce = ClusterSecret.nonce();
            byte[] proof = secret.proof(InboundConnection.CLIENT_PROOF, Arrays.copyOfRange(challenge, 1, 33), nonce,
                    hello);
            recordedAuth = concat(nonce, proof);
            s.getOutputStream().write(TcpWire.frame(Frames.Type.AUTH, recordedAuth));
            byte[] answer = readFrame(s.getInputStream(), Frames.Type.AUTH);
            assertThat(secret.verifies(answer, InboundConnection.SERVER_PROOF, nonce,
                    Arrays.copyOfRange(challenge, 1, 33))).as("the node proves the secret back").isTrue();
        }
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isZero();
        try (Socket s = new Socket()) {
            s.connect(address, 2000);
            s.setSoTimeout(5000);
            s.getOutputStream().write(TcpWire.frame(Frames.Type.HELLO, hello));
            readFrame(s.getInputStream(), Frames.Type.CHALLENGE); // a fresh nonce: the recording answers the old one
            OutputStream out = s.getOutputStream();
            out.write(TcpWire.frame(Frames.Type.AUTH, recordedAuth));
            assertThat(s.getInputStream().read()).as("the node closes the connection").isEqualTo(-1);
        }
        Await.until(() -> cluster.jmx(a).managerCount("unauthorized") == 1, () -> "the replay counted");
    }

    @Test
    void aTooShortSecret_refusesToStart_withoutRepeatingIt() {
        assertThatThrownBy(() -> cluster.start("short", "clusterSecret=tiny-secret"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("at least 16 characters").hasMessageNotContaining("tiny-secret");
    }

    private static byte[] readFrame(InputStream in, Frames.Type expected) throws IOException {
        DataInputStream d = new DataInputStream(in);
        byte[] head = new byte[Frames.HEADER_BYTES];
        d.readFully(head);
        ByteBuffer h = ByteBuffer.wrap(head);
        h.getShort();
        h.get();
        assertThat((int) h.get()).as("frame type").isEqualTo(expected.code());
        h.getLong();
        byte[] body = new byte[h.getInt()];
        d.readFully(body);
        return body;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
