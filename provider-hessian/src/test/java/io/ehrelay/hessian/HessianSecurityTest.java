package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import com.caucho.hessian.io.Hessian2Output;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Gadget;
import io.ehrelay.contract.HostileInputs;
import io.ehrelay.contract.Jmx;
import io.ehrelay.contract.TestKeyStores;
import io.ehrelay.contract.TransportFixture;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.spi.Clock;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The HTTP endpoint's defences: only envelopes are read (any other object graph is refused before it is
 * instantiated), only holders of the cluster token may post, and HTTPS works end to end.
 */
@Timeout(240)
class HessianSecurityTest {

    private static final String TOKEN = "s3cret-cluster-token-0123456789";
    private static Path keyStore;

    @BeforeAll
    static void keyStore() throws Exception {
        keyStore = TestKeyStores.selfSigned("https", "127.0.0.1", "ip:127.0.0.1");
    }

    /** Records whether Hessian ever made one: its constructor or its readResolve. */
    public static final class Intruder implements Serializable {
        private static final long serialVersionUID = 1L;
        static volatile boolean instantiated;
        String payload = "x";

        public Intruder() {
            instantiated = true;
        }

        Object readResolve() {
            instantiated = true;
            return this;
        }
    }

    private static int post(String url, byte[] body, String token) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setFixedLengthStreamingMode(body.length);
        if (token != null) {
            c.setRequestProperty(HessianSettings.TOKEN_HEADER, token);
        }
        try (OutputStream out = c.getOutputStream()) {
            out.write(body);
        }
        int status = c.getResponseCode();
        InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
        if (in != null) {
            in.readAllBytes();
            in.close();
        }
        return status;
    }

    private static byte[] hessianCall(String method, Object... arguments) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Hessian2Output out = new Hessian2Output(bytes);
        out.startCall(method, arguments.length);
        for (Object argument : arguments) {
            out.writeObject(argument);
        }
        out.completeCall();
        out.flush();
        return bytes.toByteArray();
    }

    @Test
    void callCarryingAnythingButAnEnvelope_isRefusedWithoutInstantiatingIt() throws Exception {
        try (ContractCluster cluster = new ContractCluster(HessianContractTest.FIXTURE)) {
            CacheManager node = cluster.start("hostile");
            String url = cluster.endpoint(node);
            Jmx jmx = cluster.jmx(node);
            Intruder.instantiated = false;
            Intruder intruder = new Intruder();
            Intruder.instantiated = false;
            assertThat(post(url, hessianCall("post", intruder), null)).isEqualTo(400);
            assertThat(post(url, hessianCall("deliver", new HashMap<>(Map.of("from", "x"))), null))
                    .isEqualTo(400);
            assertThat(Intruder.instantiated).as("Hessian made an Intruder on the node").isFalse();
            assertThat(jmx.managerCount("rejected")).isEqualTo(2);
            // random bytes and a truncated call: malformed, counted
            assertThat(post(url, new byte[] {'C', 5, 'h', 'e'}, null)).isEqualTo(400);
            assertThat(jmx.managerCount("malformedFrames")).isEqualTo(1);
            // an envelope announcing a payload, followed by an object instead of the binary: never made
            Envelope announcing = Envelope.of("attacker", null);
            announcing.payloadLength = 10;
            assertThat(post(url, hessianCall("post", announcing, intruder), null)).isEqualTo(400);
            assertThat(Intruder.instantiated).as("Hessian made an Intruder on the node").isFalse();
            // a payload shorter than announced, and one announced beyond the request's length
            announcing.payloadLength = 11;
            assertThat(post(url, hessianCall("post", announcing, new byte[10]), null)).isEqualTo(400);
            announcing.payloadLength = Integer.MAX_VALUE;
            assertThat(post(url, hessianCall("post", announcing, new byte[10]), null)).isEqualTo(400);
            assertThat(jmx.managerCount("malformedFrames")).isEqualTo(4);
            assertThat(node.getCache("async").getSize()).isZero();
            // an envelope whose batch hides a gadget: the codec's allow-list refuses the value
            byte[] batch = EventCodec.singletonBatch(EventCodec.encodePut("async",
                    new Element("k", new Gadget("g"))));
            assertThat(post(url, HessianWire.call("deliver", Envelope.of("attacker", batch)), null)).isEqualTo(200);
            assertThat(Gadget.readObjectRan).isFalse();
            assertThat(node.getCache("async").get("k")).isNull();
        }
    }

    @Test
    void fuzz_100kHostileBatchesAnd20kHostileCalls_eachCountedNoneApplied() throws Exception {
        try (ContractCluster cluster = new ContractCluster(HessianContractTest.FIXTURE)) {
            CacheManager node = cluster.start("fuzzed");
            String url = cluster.endpoint(node);
            Jmx jmx = cluster.jmx(node);
            int n = 100_000;
            int calls = 20_000;
            int[] notOk = {0};
            HttpConnections http = new HttpConnections(url, null, HessianWire.CONTENT_TYPE, List.of(), 5000,
                    5000, 1 << 20, Clock.SYSTEM);
            HostileInputs.Tally tally;
            try {
                // sound calls whose batch is hostile: posted, decoded on the apply thread, counted
                tally = HostileInputs.generate(2026, n, batch -> {
                    try {
                        if (http.post(HessianWire.call("post", Envelope.of("fuzzer", batch))).status != 200) {
                            notOk[0]++;
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
                Await.until(() -> jmx.managerCount("malformedFrames") == n,
                        () -> "malformedFrames " + jmx.managerCount("malformedFrames") + " of " + n);
                // hostile Hessian: random bytes and calls cut short, each refused with 400 and counted
                Random random = new Random(7);
                byte[] sound = HessianWire.call("post", Envelope.of("fuzzer", new byte[40]));
                for (int i = 0; i < calls; i++) {
                    byte[] body = i % 2 == 0 ? Arrays.copyOf(sound, 1 + random.nextInt(sound.length - 1))
                            : new byte[1 + random.nextInt(200)];
                    if (i % 2 == 1) {
                        random.nextBytes(body);
                    }
                    assertThat(http.post(body).status).as("call %d", i).isEqualTo(400);
                }
            } finally {
                http.close();
            }
            assertThat(notOk[0]).as("posts of sound calls refused").isZero();
            // rejected counts every refusal (malformed frames and refused objects alike)
            assertThat(jmx.managerCount("rejected") - n).as("hostile calls counted").isEqualTo(calls);
            System.out.printf("[hessian] fuzz: %s in sound calls, plus %d hostile calls (400); all counted%n", tally,
                    calls);
            for (String cache : node.getCacheNames()) {
                assertThat(node.getCache(cache).getSize()).as(cache).isZero();
            }
            CacheManager peer = cluster.start("peer");
            peer.getCache("async").put(new Element("after", "fuzz"));
            Await.until(() -> node.getCache("async").get("after") != null, () -> "the node stopped replicating");
        }
    }

    @Test
    void withAClusterToken_requestsWithoutItGet401AndChangeNothing() throws Exception {
        TransportFixture withToken = HessianContractTest.FIXTURE.withExtraProviderProperties("clusterToken=" + TOKEN);
        try (ContractCluster members = new ContractCluster(withToken);
             ContractCluster outsiders = new ContractCluster(HessianContractTest.FIXTURE)) {
            CacheManager a = members.start("tok-a");
            CacheManager b = members.start("tok-b");
            a.getCache("sync").put(new Element("k", "member"));
            assertThat(b.getCache("sync").get("k").getObjectValue()).isEqualTo("member");

            String url = members.endpoint(b);
            byte[] batch = EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("evil", "x")));
            assertThat(post(url, HessianWire.call("deliver", Envelope.of("x", batch)), null)).isEqualTo(401);
            assertThat(post(url, HessianWire.call("deliver", Envelope.of("x", batch)), "wrong-token-wrong-token"))
                    .isEqualTo(401);
            CacheManager outsider = outsiders.start("outsider", "peers=" + url);
            outsider.getCache("async").put(new Element("evil2", "x"));
            Jmx jo = outsiders.jmx(outsider);
            Await.until(() -> jo.cacheCount("async", "failed") >= 1, () -> "the outsider's send fails");
            assertThat(b.getCache("async").get("evil")).isNull();
            assertThat(b.getCache("async").get("evil2")).isNull();
            assertThat(members.jmx(b).managerCount("unauthorized")).isGreaterThanOrEqualTo(3);
        }
    }

    @Test
    void https_roundTrip() throws Exception {
        TransportFixture https = HessianContractTest.FIXTURE
                .withListenerProperties("hostName=127.0.0.1, port=0, tlsKeyStore=" + keyStore.toAbsolutePath()
                        + ", tlsKeyStorePassword=changeit, tlsClientAuth=false")
                .withExtraProviderProperties("tlsTrustStore=" + keyStore.toAbsolutePath()
                        + ", tlsTrustStorePassword=changeit");
        try (ContractCluster cluster = new ContractCluster(https)) {
            CacheManager a = cluster.start("https-a");
            CacheManager b = cluster.start("https-b");
            assertThat(cluster.endpoint(a)).startsWith("https://127.0.0.1:");
            a.getCache("sync").put(new Element("k", "over-https"));
            assertThat(b.getCache("sync").get("k").getObjectValue()).isEqualTo("over-https");
            b.getCache("async").put(new Element("k2", "back"));
            Await.until(() -> a.getCache("async").get("k2") != null, () -> "async over HTTPS");
            // plain HTTP to the HTTPS port gets nowhere
            String plain = cluster.endpoint(a).replace("https://", "http://");
            boolean refused;
            try {
                refused = post(plain, HessianWire.call("hello", Envelope.of("x", null)), null) != 200;
            } catch (IOException e) {
                refused = true;
            }
            assertThat(refused).isTrue();
        }
    }
}
