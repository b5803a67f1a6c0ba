package io.ehrelay.spi.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.ehrelay.spi.Clock;
import io.ehrelay.spi.ClusterSecret;

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

    private byte[] open(ClusterSecret secret, byte[][] record) throws IOException {
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
        byte[] session = open(SECRET, null);
        assertThat(sessions.check(session, here)).isEqualTo("peer-a");
        assertThatThrownBy(() -> sessions.check(session, InetAddress.getByName("10.0.0.9")))
                .hasMessageContaining("unauthorized").hasMessageContaining("opened from");
        assertThatThrownBy(() -> sessions.check(new byte[RpcSessions.SESSION_BYTES], here))
                .hasMessageContaining("without a valid session");
        assertThat(refusals).hasSize(2);
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
        byte[] response = java.nio.ByteBuffer.allocate(64).put(clientNonce)
                .put(SECRET.proof("ehrelay rpc client", late, clientNonce, "peer-a".getBytes("UTF-8"))).array();
        assertThatThrownBy(() -> sessions.authenticate("peer-a", here, late, response))
                .hasMessageContaining("expired");
        assertThat(refusals).hasSize(2);
    }

    @Test
    void openingASessionAgain_endsTheCallersEarlierOne() throws Exception {
        byte[] first = open(SECRET, null);
        byte[] second = open(SECRET, null);
        assertThat(sessions.openSessions()).isEqualTo(1);
        assertThat(sessions.check(second, here)).isEqualTo("peer-a");
        assertThatThrownBy(() -> sessions.check(first, here)).hasMessageContaining("without a valid session");
    }

    @Test
    void anIdleSession_ends() throws Exception {
        byte[] session = open(SECRET, null);
        now.addAndGet(TimeUnit.SECONDS.toNanos(RpcSessions.SESSION_IDLE_SECONDS - 1));
        sessions.check(session, here); // used: stays
        now.addAndGet(TimeUnit.SECONDS.toNanos(RpcSessions.SESSION_IDLE_SECONDS + 1));
        assertThatThrownBy(() -> sessions.check(session, here)).hasMessageContaining("ended");
        assertThat(sessions.openSessions()).isZero();
    }
}
