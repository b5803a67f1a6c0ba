package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.Arrays;
import java.util.Base64;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.rpc.RpcException;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.spi.ClusterSecret;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code clusterSecret} on Hessian, with real nodes on 127.0.0.1 (where, without a secret or token, every local
 * process would be admitted): only nodes that prove the same secret replicate; a request without a live session
 * is refused before its body is read (401, counted in {@code unauthorized}); a recorded authentication does not
 * open another session.
 */
@Timeout(120)
class HessianClusterSecretTest {

    private static final String TEXT = "correct-horse-battery-staple";
    private static final String SECRET = "clusterSecret=" + TEXT;
    private final ContractCluster cluster = new ContractCluster(HessianContractTest.FIXTURE);

    @AfterEach
    void stop() {
        cluster.close();
    }

    /** A raw call: status and body. */
    private static final class Reply {
        final int status;
        final byte[] body;

        Reply(int status, byte[] body) {
            this.status = status;
            this.body = body;
        }
    }

    private static Reply call(String url, String method, Envelope e, byte[] session) throws IOException {
        byte[] body = HessianWire.call(method, e);
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setFixedLengthStreamingMode(body.length);
        if (session != null) {
            c.setRequestProperty(HessianSettings.SESSION_HEADER, Base64.getEncoder().encodeToString(session));
        }
        try (OutputStream out = c.getOutputStream()) {
            out.write(body);
        }
        int status = c.getResponseCode();
        InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
        byte[] answer = in == null ? new byte[0] : in.readAllBytes();
        if (in != null) {
            in.close();
        }
        return new Reply(status, answer);
    }

    @Test
    void nodesWithTheSameSecret_replicate_bothWays_andResync() {
        CacheManager a = cluster.start("a", SECRET);
        for (int i = 0; i < 100; i++) {
            a.getCache("async").put(new Element("boot-" + i, "v" + i));
        }
        CacheManager b = cluster.start("b", SECRET);
        a.getCache("async").put(new Element("k", "from a"));
        b.getCache("async").put(new Element("j", "from b"));
        Await.until(() -> b.getCache("async").get("k") != null && a.getCache("async").get("j") != null,
                () -> "replication between nodes holding the same secret");
        cluster.node(b).replication().resyncFrom(cluster.endpoint(a));
        Await.until(() -> b.getCache("async").get("boot-99") != null, () -> "b resynced from a");
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isZero();
        assertThat(cluster.jmx(b).managerCount("unauthorized")).isZero();
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
        Await.until(() -> cluster.jmx(wrong).managerCount("failed") > 0 && cluster.jmx(none).managerCount("failed") > 0,
                () -> "the refused nodes count their sends as failed");
        assertThat(a.getCache("async").getSize()).as("elements applied from refused nodes").isZero();
        a.getCache("async").put(new Element("secret", "v"));
        Await.until(() -> cluster.jmx(a).managerCount("failed") > 0, () -> "a's sends to unproven peers fail");
        assertThat(wrong.getCache("async").get("secret")).isNull();
        assertThat(none.getCache("async").get("secret")).isNull();
    }

    @Test
    void anOutsiderOnThisHost_isRefusedBeforeItsBodyIsRead() throws Exception {
        CacheManager a = cluster.start("a", SECRET);
        String url = cluster.endpoint(a);
        byte[] put = EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("evil", new byte[8192])));
        // a post without a session: its body is over what a sessionless call may carry
        assertThat(call(url, "post", Envelope.of("outsider", put), null).status).isEqualTo(401);
        // a made-up session
        assertThat(call(url, "post", Envelope.of("outsider", put), new byte[32]).status).isEqualTo(401);
        // a small call without a session: read (at most 4 KiB), then refused
        Envelope state = Envelope.of("outsider", null);
        state.cacheName = "async";
        assertThatThrownBy(() -> HessianWire.readReply(call(url, "openState", state, null).body))
                .isInstanceOf(RpcException.class).hasMessageContaining("unauthorized");
        assertThatThrownBy(() -> HessianWire.readReply(call(url, "hello", Envelope.of("outsider", null), null).body))
                .isInstanceOf(RpcException.class).hasMessageContaining("unauthorized");
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isEqualTo(4);
        assertThat(a.getCache("async").getSize()).isZero();
    }

    @Test
    void aRecordedAuthentication_doesNotOpenAnotherSession() throws Exception {
        CacheManager a = cluster.start("a", SECRET);
        String url = cluster.endpoint(a);
        byte[][] recorded = new byte[1][];
        RpcSessions.Credentials session = RpcSessions.open(ClusterSecret.of(TEXT), "recorder", new RpcSessions.Listener() {
            @Override
            public byte[] challenge() throws IOException {
                return HessianWire.readBinaryReply(call(url, "challenge", Envelope.of("recorder", null), null).body);
            }

            @Override
            public byte[] authenticate(byte[] challenge, byte[] response) throws IOException {
                byte[] both = Arrays.copyOf(challenge, challenge.length + response.length);
                System.arraycopy(response, 0, both, challenge.length, response.length);
                recorded[0] = both;
                return HessianWire.readBinaryReply(call(url, "authenticate", Envelope.of("recorder", both), null).body);
            }
        });
        byte[] put = EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("proven", "v")));
        byte[] credential = session.next();
        assertThat(call(url, "deliver", Envelope.of("recorder", put), credential).status).isEqualTo(200);
        assertThat(a.getCache("async").get("proven")).isNotNull();
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isZero();
        assertThatThrownBy(() -> HessianWire.readBinaryReply(
                call(url, "authenticate", Envelope.of("recorder", recorded[0]), null).body))
                .isInstanceOf(RpcException.class).hasMessageContaining("replayed");
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isEqualTo(1);

        // the recorded call itself, sent again (from the recorder's own host: where its session is valid)
        a.getCache("async").remove("proven");
        assertThat(call(url, "deliver", Envelope.of("recorder", put), credential).status).as("a replayed call")
                .isEqualTo(401);
        assertThat(a.getCache("async").get("proven")).as("the replayed put was applied").isNull();
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isEqualTo(2);
        // the session goes on with its next credential
        assertThat(call(url, "deliver", Envelope.of("recorder", put), session.next()).status).isEqualTo(200);
    }
}
