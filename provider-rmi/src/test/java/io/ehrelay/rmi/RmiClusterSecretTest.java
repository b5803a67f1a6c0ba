package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InvalidClassException;
import java.nio.ByteBuffer;
import java.rmi.AccessException;
import java.rmi.UnmarshalException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.SetBombs;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.testing.CacheKeys;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;
import net.sf.ehcache.distribution.RmiEventMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code clusterSecret} on RMI, with real nodes on 127.0.0.1 (where, without a secret, every local process would
 * be admitted): only nodes that prove the same secret replicate; the relay serves no call without a session, the
 * stock cache peers no caller outside {@code unauthenticatedPeers} (none by default once a secret is set); a
 * recorded authentication does not open another session.
 */
@Timeout(120)
class RmiClusterSecretTest {

    private static final String TEXT = "correct-horse-battery-staple";
    private static final String SECRET = "clusterSecret=" + TEXT;
    private final ContractCluster cluster = new ContractCluster(RmiContractTest.FIXTURE);

    @AfterEach
    void stop() {
        cluster.close();
    }

    @Test
    void nodesWithTheSameSecret_replicate_bothWays_andBootstrap() {
        CacheManager a = cluster.start("a", SECRET);
        for (int i = 0; i < 100; i++) {
            a.getCache("async").put(new Element("boot-" + i, "v" + i));
        }
        CacheManager b = cluster.start("b", SECRET);
        a.getCache("async").put(new Element("k", "from a"));
        b.getCache("async").put(new Element("j", "from b"));
        Await.until(() -> b.getCache("async").get("k") != null && a.getCache("async").get("j") != null,
                () -> "replication between nodes holding the same secret");
        // a state transfer runs under the session too
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
        // the secret-holding node does not send to them either: they do not prove the secret back
        a.getCache("async").put(new Element("secret", "v"));
        Await.until(() -> cluster.jmx(a).managerCount("failed") > 0, () -> "a's sends to unproven peers fail");
        assertThat(wrong.getCache("async").get("secret")).isNull();
        assertThat(none.getCache("async").get("secret")).isNull();
    }

    @Test
    void anOutsiderOnThisHost_canNeitherCallTheRelay_norTheStockCachePeers() throws Exception {
        CacheManager a = cluster.start("a", SECRET);
        a.getCache("async").put(new Element("kept", "v"));
        Registry registry = LocateRegistry.getRegistry("127.0.0.1", RmiUrls.port(cluster.endpoint(a)));
        RelayRemote relay = (RelayRemote) registry.lookup(RelayRemote.BINDING);
        byte[] put = EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("evil", "v")));
        // a batch is refused before its bytes are read (RelayBatch.readObject checks the session first)
        assertThatThrownBy(() -> relay.post(new RelayBatch("outsider", null, put)))
                .matches(RpcSessions::isRefusal, "a refusal");
        assertThatThrownBy(() -> relay.deliver(new RelayBatch("outsider", new byte[32], put)))
                .matches(RpcSessions::isRefusal, "a refusal");
        assertThatThrownBy(() -> relay.hello(RelayBatch.name("outsider"), null))
                .hasCauseInstanceOf(AccessException.class);
        assertThatThrownBy(() -> relay.openState(null, RelayBatch.name("async")))
                .hasCauseInstanceOf(AccessException.class);
        assertThatThrownBy(() -> relay.authenticate(RelayBatch.name("outsider"), relay.challenge(), new byte[64]))
                .hasCauseInstanceOf(AccessException.class);

        CachePeer stock = (CachePeer) registry.lookup("async");
        // a call with an object argument is refused at its first object, before the JDK reads it
        assertThatThrownBy(() -> stock.put(new Element("evil2", "v"))).hasCauseInstanceOf(UnmarshalException.class)
                .hasRootCauseInstanceOf(InvalidClassException.class);
        assertThatThrownBy(() -> stock.remove("kept")).hasCauseInstanceOf(AccessException.class);
        assertThatThrownBy(stock::removeAll).hasCauseInstanceOf(AccessException.class);
        assertThatThrownBy(stock::getKeys).hasCauseInstanceOf(AccessException.class);
        assertThatThrownBy(() -> stock.getQuiet("kept")).hasCauseInstanceOf(AccessException.class);

        assertThat(cluster.jmx(a).managerCount("unauthorized")).isEqualTo(10);
        assertThat(CacheKeys.of(a.getCache("async"))).containsExactly("kept");
    }

    /**
     * The stock path read nothing of an outsider before: the JDK decoded its arguments first. A value of a class
     * the allow-list refuses then cleared the whole cache; a nested-set bomb cost seconds of CPU per call.
     */
    @Test
    void anOutsidersStockCall_withARefusedClassOrABomb_changesNothing_andIsNotDecoded() throws Exception {
        CacheManager a = cluster.start("a", SECRET);
        for (int i = 0; i < 61; i++) {
            a.getCache("async").put(new Element("kept-" + i, "v" + i));
        }
        Registry registry = LocateRegistry.getRegistry("127.0.0.1", RmiUrls.port(cluster.endpoint(a)));
        CachePeer stock = (CachePeer) registry.lookup("async");
        long unauthorized = cluster.jmx(a).managerCount("unauthorized");
        long invalidated = cluster.jmx(a).cacheCount("async", "invalidated");
        long rejected = cluster.jmx(a).managerCount("rejected");

        for (int i = 0; i < 3; i++) {
            assertThatThrownBy(() -> stock.put(new Element("refused", new LongAdder())))
                    .hasCauseInstanceOf(UnmarshalException.class);
        }
        List<Object> events = new ArrayList<>();
        events.add(new RmiEventMessage(a.getCache("async"),
                RmiEventMessage.RmiEventType.PUT, "refused",
                new Element("refused", new LongAdder())));
        assertThatThrownBy(() -> stock.send(events)).hasCauseInstanceOf(UnmarshalException.class);
        assertThat(a.getCache("async").getSize()).as("entries after refused calls").isEqualTo(61);

        Set<Object> bomb = SetBombs.bomb(27);
        long start = System.nanoTime();
        assertThatThrownBy(() -> stock.put(new Element("bomb", bomb))).hasCauseInstanceOf(UnmarshalException.class);
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(millis).as("ms the node took to refuse a depth-27 nested-set bomb (JDK decoding: ~10 s)")
                .isLessThan(1_000);

        assertThat(a.getCache("async").getSize()).isEqualTo(61);
        assertThat(a.getCache("async").get("bomb")).isNull();
        assertThat(cluster.jmx(a).managerCount("unauthorized") - unauthorized).as("refusals counted").isEqualTo(5);
        assertThat(cluster.jmx(a).cacheCount("async", "invalidated")).as("invalidations").isEqualTo(invalidated);
        assertThat(cluster.jmx(a).managerCount("rejected")).as("rejected (an outsider's call is no peer's event)")
                .isEqualTo(rejected);
    }

    @Test
    void aRecordedAuthentication_doesNotOpenAnotherSession() throws Exception {
        CacheManager a = cluster.start("a", SECRET);
        Registry registry = LocateRegistry.getRegistry("127.0.0.1", RmiUrls.port(cluster.endpoint(a)));
        RelayRemote relay = (RelayRemote) registry.lookup(RelayRemote.BINDING);
        byte[][] recorded = new byte[2][];
        RpcSessions.Credentials session = RpcSessions.open(ClusterSecret.of(TEXT), "recorder",
                new RpcSessions.Listener() {
            @Override
            public byte[] challenge() throws IOException {
                return recorded[0] = relay.challenge();
            }

            @Override
            public byte[] authenticate(byte[] challenge, byte[] response) throws IOException {
                recorded[1] = response;
                return relay.authenticate(RelayBatch.name("recorder"), challenge, response);
            }
        });
        byte[] put = EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("proven", "v")));
        byte[] credential = session.next();
        relay.deliver(new RelayBatch("recorder", credential, put));
        assertThat(a.getCache("async").get("proven")).isNotNull();
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isZero();
        // the recorded call itself, sent again: refused, not applied
        a.getCache("async").remove("proven");
        assertThatThrownBy(() -> relay.deliver(new RelayBatch("recorder", credential, put)))
                .matches(RpcSessions::isRefusal, "a refusal");
        assertThat(a.getCache("async").get("proven")).as("the replayed put was applied").isNull();
        relay.deliver(new RelayBatch("recorder", session.next(), put));
        assertThat(a.getCache("async").get("proven")).isNotNull();
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isEqualTo(1);

        assertThatThrownBy(() -> relay.authenticate(RelayBatch.name("recorder"), recorded[0], recorded[1]))
                .hasCauseInstanceOf(AccessException.class).hasMessageContaining("replayed");
        byte[] other = relay.challenge();
        assertThatThrownBy(() -> relay.authenticate(RelayBatch.name("recorder"), other, recorded[1]))
                .hasCauseInstanceOf(AccessException.class).hasMessageContaining("wrong proof");
        byte[] forged = ByteBuffer.allocate(32).put(Arrays.copyOf(other, 24)).putLong(0).array();
        assertThatThrownBy(() -> relay.authenticate(RelayBatch.name("recorder"), forged, recorded[1]))
                .hasCauseInstanceOf(AccessException.class).hasMessageContaining("did not issue");
        assertThat(cluster.jmx(a).managerCount("unauthorized")).isEqualTo(4);
    }
}
