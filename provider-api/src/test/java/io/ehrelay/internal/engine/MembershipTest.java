package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.DecodedBatch;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.Peer;
import io.ehrelay.spi.ReplicationEvent;
import io.ehrelay.testing.ManualClock;
import org.assertj.core.groups.Tuple;
import org.junit.jupiter.api.Test;

/** The announcing and the bookkeeping of {@link Membership}, with a transport that records what it is given. */
class MembershipTest {

    private final ManualClock clock = new ManualClock();
    private final Set<String> local = ConcurrentHashMap.newKeySet();
    private final RecordingTransport transport = new RecordingTransport();
    private final List<String> sentTo = transport.sentTo;
    private final Membership membership = new Membership("cm", transport, () -> new ArrayList<>(local), clock);
    private final Peer p = new Peer("p:1");

    /** What was sent, decoded. */
    private List<DecodedBatch> sent() {
        List<DecodedBatch> out = new ArrayList<>();
        for (byte[] b : transport.sentBytes) {
            try {
                out.add(EventDecoder.decodeBatch(b, 0, b.length, CodecLimits.defaults()));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
        return out;
    }

    private DecodedBatch last() {
        List<DecodedBatch> all = sent();
        return all.get(all.size() - 1);
    }

    private static Set<String> set(String... names) {
        return new HashSet<>(Arrays.asList(names));
    }

    @Test
    void aPeerThatSaidItHoldsNothing_stillHoldsNothing_afterASendToItFails() {
        membership.peersChanged(Collections.singletonList(p));
        membership.announced("p:1", 7, 2, set(), set("a", "b"));
        membership.unreachable("p:1");
        assertThat(membership.has("p:1", "a")).isFalse();
        membership.announced("p:1", 8, 1, null, set());
        assertThat(membership.has("p:1", "a")).as("a new run announces afresh").isTrue();
        membership.announced("p:1", 8, 2, set("a"), set());
        membership.unreachable("p:1");
        assertThat(membership.has("p:1", "b")).as("holding caches and unreachable: every cache again").isTrue();
    }

    @Test
    void aStoppingNode_waitsForAPeerThatTakesItsLeavingLate() throws Exception {
        membership.peersChanged(Collections.singletonList(p));
        // a peer on a loaded host: its TLS handshake and answer took over 1 s (a contract run under -T 2), and a
        // node that stopped before stayed listed there, failing that peer's synchronous puts
        transport.answerAfterMillis = 1_500;
        long t0 = System.nanoTime();
        membership.leaving(ReplicationNode.LEAVING_MILLIS);
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(waited).as("ms waited for the peer's answer").isGreaterThanOrEqualTo(1_400);
        assertThat(last().members()).as("the leaving: no cache any more").isEmpty();
    }

    @Test
    void aStoppingNode_sendsItsLeavingAgain_toAPeerWhoseChannelFailedOnce() throws Exception {
        // one reset puts a channel in its backoff, and a send meanwhile fails at once: the peer, up, kept listing
        // the stopped node and failed a synchronous put to it (a contract run under -T 2)
        membership.peersChanged(Collections.singletonList(p));
        int before = sent().size();
        transport.failNext(1);
        membership.leaving(ReplicationNode.LEAVING_MILLIS);
        assertThat(sent()).as("the leaving, failed, then again").hasSize(before + 2);
        assertThat(last().members()).as("the leaving: no cache any more").isEmpty();
    }

    @Test
    void aStoppingNode_triesAPeerThatDoesNotAnswer_aFewTimes_andOneThatLeft_once() throws Exception {
        Peer q = new Peer("q:1");
        membership.peersChanged(Arrays.asList(p, q));
        membership.announced("q:1", 9, 2, set(), set("a")); // q left
        int before = sent().size();
        transport.failing = true;
        long t0 = System.nanoTime();
        membership.leaving(ReplicationNode.LEAVING_MILLIS);
        long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        List<String> to = sentTo.subList(before, sentTo.size());
        assertThat(to).as("p: three attempts; q: one").containsExactly("p:1", "q:1", "p:1", "p:1");
        assertThat(waited).as("ms a crashed peer holds up the stop").isLessThan(1_500);
    }

    @Test
    void aNodeStartsWithEveryCache_andNamesItsCachesOnlyOnceItRemovesOne() {
        membership.peersChanged(Collections.singletonList(p));
        assertThat(sent()).hasSize(1);
        assertThat(last().isMembership()).isTrue();
        assertThat(last().members()).as("every cache").isNull();

        local.addAll(set("a", "b")); // caches being created at start-up: not announced one by one
        membership.localAdded();
        membership.localAdded();
        assertThat(sent()).hasSize(1);

        local.remove("b");
        membership.localRemoved();
        assertThat(sent()).hasSize(2);
        assertThat(last().members()).containsExactly("a");
        assertThat(last().removed()).containsExactly("b");
        local.add("c");
        membership.localAdded(); // named from now on: every change is announced
        assertThat(last().members()).containsExactlyInAnyOrder("a", "c");
        assertThat(last().seq()).as("numbered within the run").isGreaterThan(sent().get(1).seq());
        assertThat(last().stream()).isEqualTo(sent().get(0).stream());
    }

    @Test
    void anEventOfAMissingCache_isAnsweredWithTheNames_atMostOnceEveryTwoSeconds() {
        membership.peersChanged(Collections.singletonList(p));
        local.add("a");
        membership.localAdded();
        membership.sentUnknownCache("p:1");
        assertThat(last().members()).containsExactly("a");
        int n = sent().size();
        membership.sentUnknownCache("p:1");
        assertThat(sent()).hasSize(n);
        clock.advanceMillis(2001);
        membership.sentUnknownCache("p:1");
        assertThat(sent()).hasSize(n + 1);
        assertThat(sentTo.get(n)).isEqualTo("p:1");
    }

    @Test
    void whatAPeerSaid_decidesWhatItIsListedFor_andWhatItIsSent_andALateAnnouncementChangesNothing() {
        membership.peersChanged(Arrays.asList(p, new Peer("q:2")));
        local.addAll(set("a", "b", "c"));
        membership.localAdded();
        assertThat(membership.has("p:1", "b")).as("unknown: every cache").isTrue();
        assertThat(membership.missing("p:1")).isNull();
        membership.announced("p:1", 9, 3, set("a"), set("b")); // holds a, removed b, never had c
        assertThat(membership.has("p:1", "b")).isFalse();
        assertThat(membership.has("p:1", "c")).isFalse();
        assertThat(membership.missing("p:1")).as("only what it removed is left out").containsExactly("b");
        membership.announced("p:1", 9, 2, set("a", "b", "c"), set()); // older: ignored
        assertThat(membership.has("p:1", "b")).isFalse();
        assertThat(membership.holding(Arrays.asList(p, new Peer("q:2")), "b")).extracting(Peer::endpoint)
                .containsExactly("q:2");
        assertThat(membership.holding(Arrays.asList(p, new Peer("q:2")), "c")).hasSize(2);
        membership.unreachable("p:1"); // it may be restarting: back to every cache
        assertThat(membership.has("p:1", "b")).isTrue();
        assertThat(membership.missing("p:1")).isNull();
    }

    @Test
    void aPeerThatAddsACacheItWasNotSent_getsThatCacheCleared_butNotAfterARestart() {
        membership.peersChanged(Collections.singletonList(p));
        local.addAll(set("a", "b"));
        membership.localAdded();
        membership.announced("p:1", 9, 1, set("a"), set("b"));
        boolean[] out = membership.leaveOut("p:1", Arrays.asList("a", "b", "a"));
        assertThat(out).containsExactly(false, true, false);
        membership.announced("p:1", 9, 2, set("a", "b"), set());
        DecodedBatch clear = last();
        assertThat(clear.isMembership()).isFalse();
        assertThat(clear.events()).extracting(ReplicationEvent::op, ReplicationEvent::cacheName)
                .containsExactly(Tuple.tuple(Op.REMOVE_ALL, "b"));
        assertThat(sentTo.get(sentTo.size() - 1)).isEqualTo("p:1");
        int n = sent().size();
        membership.announced("p:1", 9, 3, set("a", "b"), set());
        assertThat(sent()).as("cleared once").hasSize(n);

        membership.announced("p:1", 9, 4, set("a"), set("b"));
        membership.leaveOut("p:1", Collections.singletonList("b"));
        membership.announced("p:1", 10, 1, null, set()); // a new run: its caches are new, nothing to clear
        assertThat(sent()).hasSize(n);
    }

    @Test
    void aSenderThatIsNoPeer_isNeitherHeardNorAnswered() {
        membership.peersChanged(Collections.singletonList(p));
        local.add("a");
        membership.localAdded();
        int n = sent().size();
        membership.announced("stranger:9", 1, 1, set(), set("a"));
        assertThat(membership.has("stranger:9", "a")).isTrue();
        assertThat(membership.missing("stranger:9")).isNull();
        membership.sentUnknownCache("stranger:9");
        assertThat(sent()).as("nothing sent to a name a sender gave").hasSize(n);
    }

    @Test
    void anAnnouncementThatCouldNotBeDelivered_isSentAgainWhenABatchGetsThrough() {
        transport.failing = true;
        membership.peersChanged(Collections.singletonList(p));
        assertThat(sent()).hasSize(1);
        transport.failing = false;
        membership.delivered("p:1");
        assertThat(sent()).hasSize(2);
        membership.delivered("p:1");
        assertThat(sent()).as("only what was lost").hasSize(2);
        transport.failing = true;
        local.add("a");
        membership.localRemoved();
        transport.failing = false;
        int n = sent().size();
        membership.retryUndelivered();
        assertThat(sent()).hasSize(n + 1);
        assertThat(last().members()).containsExactly("a");
    }
}
