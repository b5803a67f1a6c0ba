package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.Serializable;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.file.Path;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import com.caucho.hessian.io.Hessian2Output;

import io.ehrelay.codec.EventCodec;
import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;

/**
 * The HTTP endpoint's defences: only envelopes are read (any other object graph is refused before it is
 * instantiated), only holders of the cluster token may post, and HTTPS works end to end.
 */
class HessianSecurityTest {

    private static final String TOKEN = "s3cret-cluster-token-0123456789";
    private static Path keyStore;

    @BeforeAll
    static void keyStore() throws Exception {
        keyStore = io.ehrelay.contract.TestKeyStores.selfSigned("https", "127.0.0.1", "ip:127.0.0.1");
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
        try (ContractCluster cluster = new ContractCluster(new HessianFixture())) {
            CacheManager node = cluster.start("hostile");
            String url = cluster.endpoint(node);
            Jmx jmx = cluster.jmx(node);
            Intruder.instantiated = false;
            Intruder intruder = new Intruder();
            Intruder.instantiated = false;
            assertThat(post(url, hessianCall("post", intruder), null)).isEqualTo(400);
            assertThat(post(url, hessianCall("deliver", new java.util.HashMap<>(java.util.Map.of("from", "x"))), null))
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
                    new Element("k", new io.ehrelay.contract.Gadget("g"))));
            assertThat(post(url, HessianWire.call("deliver", Envelope.of("attacker", batch)), null)).isEqualTo(200);
            assertThat(io.ehrelay.contract.Gadget.readObjectRan).isFalse();
            assertThat(node.getCache("async").get("k")).isNull();
        }
    }

    @Test
    void withAClusterToken_requestsWithoutItGet401AndChangeNothing() throws Exception {
        HessianFixture withToken = new HessianFixture() {
            @Override
            public String extraProviderProperties() {
                return "clusterToken=" + TOKEN;
            }
        };
        try (ContractCluster members = new ContractCluster(withToken);
             ContractCluster outsiders = new ContractCluster(new HessianFixture())) {
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
        HessianFixture https = new HessianFixture() {
            @Override
            public String listenerProperties() {
                return "hostName=127.0.0.1, port=0, tlsKeyStore=" + keyStore.toAbsolutePath()
                        + ", tlsKeyStorePassword=changeit";
            }

            @Override
            public String extraProviderProperties() {
                return "tlsTrustStore=" + keyStore.toAbsolutePath() + ", tlsTrustStorePassword=changeit";
            }
        };
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
