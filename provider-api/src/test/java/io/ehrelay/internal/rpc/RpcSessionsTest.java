package io.ehrelay.internal.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.spi.Clock;
import io.ehrelay.spi.ClusterSecret;
import org.junit.jupiter.api.Test;

/** Sessions opened by proving the cluster secret: what opens one, what a session admits, and when it ends. */
class RpcSessionsTest {

    private static final ClusterSecret SECRET = ClusterSecret.of("correct-horse-battery-staple");
    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final Clock clock = new Clock() {
        @Override
        public long nanoTime() {
            return now.get();
        }

        @Override
        public long currentTimeMillis() {
            return now.get() / 1_000_000;
        }
    };
    private final List<String> refusals = new ArrayList<>();
    private final RpcSessions sessions = new RpcSessions(SECRET, clock, (host, why) -> refusals.add(why));
    private final InetAddress here = InetAddress.getLoopbackAddress();

    private RpcSessions.Credentials open(ClusterSecret secret, byte[][] record) throws IOException {
        return RpcSessions.open(secret, "peer-a", new RpcSessions.Listener() {
            @Override
            public byte[] challenge() {
                return sessions.challenge();
            }

            @Override
            public byte[] authenticate(byte[] challenge, byte[] response) throws IOException {
                if (record != null) {
                    record[0] = challenge;
                    record[1] = response;
                }
                return sessions.authenticate("peer-a", here, challenge, response);
            }
        });
    }

    @Test
    void aHolderOfTheSecret_opensASession_thatNamesItAndWorksFromItsHostOnly() throws Exception {
        RpcSessions.Credentials session = open(SECRET, null);
        assertThat(sessions.check(session.next(), here)).isEqualTo("peer-a");
        byte[] elsewhere = session.next();
        assertThatThrownBy(() -> sessions.check(elsewhere, InetAddress.getByName("10.0.0.9")))
                .hasMessageContaining("unauthorized").hasMessageContaining("opened from");
        assertThatThrownBy(() -> sessions.check(new byte[RpcSessions.CREDENTIAL_BYTES], here))
                .hasMessageContaining("without a valid session");
        assertThatThrownBy(() -> sessions.check(session.session(), here)).as("the bare session")
                .hasMessageContaining("without a valid session");
        assertThat(refusals).hasSize(3);
    }

    @Test
    void anotherSecret_isRefused_andTheListenerWithAnotherSecretIsNotBelieved() {
        assertThatThrownBy(() -> open(ClusterSecret.of("another-secret-of-16-chars"), null))
                .hasMessageContaining("wrong proof");
        RpcSessions other = new RpcSessions(ClusterSecret.of("another-secret-of-16-chars"), clock, (h, w) -> { });
        // a listener that does not hold the secret: its answer does not prove it, and the caller says so
        assertThatThrownBy(() -> RpcSessions.open(SECRET, "peer-a", new RpcSessions.Listener() {
            @Override
            public byte[] challenge() {
                return other.challenge();
            }

            @Override
            public byte[] authenticate(byte[] challenge, byte[] response) {
                byte[] forged = new byte[ClusterSecret.PROOF_BYTES + RpcSessions.SESSION_BYTES];
                return forged;
            }
        })).hasMessageContaining("does not prove the cluster secret");
    }

    @Test
    void aRecordedExchange_opensNothing_andChallengesExpire() throws Exception {
        byte[][] record = new byte[2][];
        open(SECRET, record);
        assertThatThrownBy(() -> sessions.authenticate("peer-a", here, record[0], record[1]))
                .hasMessageContaining("replayed");
        byte[] late = sessions.challenge();
        now.addAndGet(TimeUnit.SECONDS.toNanos(RpcSessions.CHALLENGE_SECONDS + 1));
        byte[] clientNonce = ClusterSecret.nonce();
        byte[] response = ByteBuffer.allocate(64).put(clientNonce)
                .put(SECRET.proof("ehrelay rpc client", late, clientNonce, "peer-a".getBytes("UTF-8"))).array();
        assertThatThrownBy(() -> sessions.authenticate("peer-a", here, late, response))
                .hasMessageContaining("expired");
        assertThat(refusals).hasSize(2);
    }

    @Test
    void openingASessionAgain_endsTheCallersEarlierOne() throws Exception {
        RpcSessions.Credentials first = open(SECRET, null);
        RpcSessions.Credentials second = open(SECRET, null);
        assertThat(sessions.openSessions()).isEqualTo(1);
        assertThat(sessions.check(second.next(), here)).isEqualTo("peer-a");
        assertThatThrownBy(() -> sessions.check(first.next(), here)).hasMessageContaining("without a valid session");
    }

    @Test
    void anIdleSession_ends() throws Exception {
        RpcSessions.Credentials session = open(SECRET, null);
        now.addAndGet(TimeUnit.SECONDS.toNanos(RpcSessions.SESSION_IDLE_SECONDS - 1));
        sessions.check(session.next(), here); // used: stays
        now.addAndGet(TimeUnit.SECONDS.toNanos(RpcSessions.SESSION_IDLE_SECONDS + 1));
        assertThatThrownBy(() -> sessions.check(session.next(), here)).hasMessageContaining("ended");
        assertThat(sessions.openSessions()).isZero();
    }

    @Test
    void aRecordedCall_isNotServedAgain_norAForgedOne_whileCallsMayOvertakeEachOther() throws Exception {
        RpcSessions.Credentials session = open(SECRET, null);
        byte[] recorded = session.next();
        assertThat(sessions.check(recorded, here)).isEqualTo("peer-a");
        assertThatThrownBy(() -> sessions.check(recorded, here)).hasMessageContaining("replayed");
        // calls in flight together arrive in any order, each once
        byte[][] inFlight = new byte[10][];
        for (int i = 0; i < inFlight.length; i++) {
            inFlight[i] = session.next();
        }
        for (int i = inFlight.length - 1; i >= 0; i--) {
            assertThat(sessions.check(inFlight[i], here)).isEqualTo("peer-a");
        }
        for (byte[] c : inFlight) {
            assertThatThrownBy(() -> sessions.check(c, here)).hasMessageContaining("replayed");
        }
        // one older than the window is refused even if it was never served
        byte[] old = session.next();
        for (int i = 0; i < 64; i++) {
            sessions.check(session.next(), here);
        }
        assertThatThrownBy(() -> sessions.check(old, here)).hasMessageContaining("older than");
        // a credential with another counter but the MAC of a real one
        byte[] forged = session.next();
        forged[RpcSessions.SESSION_BYTES + 7] ^= 1;
        assertThatThrownBy(() -> sessions.check(forged, here)).hasMessageContaining("forged");
    }
}
