package io.ehrelay.internal.rpc;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cluster secret for transports whose calls are not tied to one connection (RMI, HTTP): a caller proves the
 * secret once by a challenge ({@link #challenge()}) and a response ({@link #authenticate}) and gets a session,
 * which every later call names in a credential of its own ({@link Credentials}, checked by {@link #check}); the
 * listener serves a call only under a live session, from the host that opened it, and each credential once.
 * The protocol, its bounds and what it does not protect: docs/wire-format.md, "Sessions of RMI and Hessian
 * calls". Every refusal goes to the {@code refused} callback, which counts it. Thread-safe.
 */
public final class RpcSessions {

    /** Bytes of a session. */
    public static final int SESSION_BYTES = 32;
    /** Bytes of a call's credential: the session, its counter, the MAC of both. */
    public static final int CREDENTIAL_BYTES = SESSION_BYTES + 8 + 16;
    /** How far behind the highest counter seen a call may arrive (calls of a session may overtake each other). */
    static final int WINDOW = 64;
    static final int CHALLENGE_SECONDS = 30;
    static final int SESSION_IDLE_SECONDS = 600;
    static final int MAX_SESSIONS = 4096;

    private static final String CLIENT = "ehrelay rpc client";
    private static final String SERVER = "ehrelay rpc server";
    private static final String CALL_KEY = "ehrelay rpc call key";
    private static final int RANDOM_BYTES = 16;
    private static final SecureRandom RANDOM = new SecureRandom();

    private static final Logger LOG = LoggerFactory.getLogger(RpcSessions.class);
    private static final RateLimitedLog REFUSALS =
            new RateLimitedLog(LOG, 10_000);

    /** How a refusal's message starts, so that the caller can tell it from other failures. */
    public static final String UNAUTHORIZED = "ehrelay: unauthorized: ";

    private final ClusterSecret secret;
    private final Hmac nonceKey;
    private final Clock clock;
    private final Refusals refusals;
    private final Map<ByteBuffer, Session> sessions = new ConcurrentHashMap<>();
    private final Map<ByteBuffer, Long> usedNonces = new ConcurrentHashMap<>();

    public RpcSessions(ClusterSecret secret, Clock clock, Refusals refusals) {
        this.secret = secret;
        this.clock = clock;
        this.refusals = refusals;
        byte[] key = new byte[32];
        RANDOM.nextBytes(key);
        this.nonceKey = new Hmac(key);
    }

    /** Why a call was refused, and from where: for the transport's counter and log. */
    public interface Refusals {
        void refused(InetAddress from, String why);
    }

    private static final class Session {
        final InetAddress host;
        final String from;
        final Hmac key;
        volatile long lastUsed;
        /** The highest counter served, and which of the {@link #WINDOW} below it were (bit i: highest - i). */
        private long highest;
        private long served;

        Session(InetAddress host, String from, Hmac key, long now) {
            this.host = host;
            this.from = from;
            this.key = key;
            this.lastUsed = now;
        }

        /** Takes {@code counter} if it was not served yet and is not too old: once each. */
        synchronized boolean take(long counter) {
            if (counter <= 0) {
                return false;
            }
            if (counter > highest) {
                long shift = counter - highest;
                served = shift >= WINDOW ? 0 : served << shift;
                served |= 1;
                highest = counter;
                return true;
            }
            long behind = highest - counter;
            if (behind >= WINDOW || (served & (1L << behind)) != 0) {
                return false;
            }
            served |= 1L << behind;
            return true;
        }
    }

    /**
     * The caller's side of a session: {@link #next()} gives each call its own credential. Thread-safe.
     */
    public static final class Credentials {
        private final byte[] session;
        private final Hmac key;
        private final AtomicLong counter = new AtomicLong();

        Credentials(byte[] session, byte[] key) {
            this.session = session;
            this.key = new Hmac(key);
        }

        /** The credential of the next call: {@value RpcSessions#CREDENTIAL_BYTES} bytes, good once. */
        public byte[] next() {
            ByteBuffer b = ByteBuffer.allocate(CREDENTIAL_BYTES);
            b.put(session).putLong(counter.incrementAndGet());
            b.put(key.of(b.array(), SESSION_BYTES + 8), 0, CREDENTIAL_BYTES - SESSION_BYTES - 8);
            return b.array();
        }

        /** The session these credentials name (for tests). */
        public byte[] session() {
            return session.clone();
        }
    }

    /**
     * The sessions of a node with a cluster secret, its refusals counted in {@code unauthorized} and logged (at
     * most once per host and 10 s), or {@code null} when the node has no secret.
     */
    public static RpcSessions of(TransportContext ctx) {
        ClusterSecret secret = ctx.clusterSecret();
        if (secret == null) {
            return null;
        }
        TransportMetrics.Count unauthorized = ctx.metrics().count(MetricNames.UNAUTHORIZED);
        String node = ctx.cacheManagerName();
        return new RpcSessions(secret, ctx.clock(), (host, why) -> {
            unauthorized.mark();
            String from = host == null ? "?" : host.getHostAddress();
            REFUSALS.warn("unauthorized:" + from, "ehrelay: refused a call from {} to CacheManager {}: {} (counted "
                    + "in unauthorized)", from, node, why);
        });
    }

    /** A fresh challenge ({@link ClusterSecret#NONCE_BYTES} bytes): random, its time, and this node's MAC of both. */
    public byte[] challenge() {
        ByteBuffer b = ByteBuffer.allocate(ClusterSecret.NONCE_BYTES);
        byte[] random = new byte[RANDOM_BYTES];
        RANDOM.nextBytes(random);
        b.put(random).putLong(clock.nanoTime());
        b.put(nonceKey.of(b.array(), RANDOM_BYTES + 8), 0, ClusterSecret.NONCE_BYTES - RANDOM_BYTES - 8);
        return b.array();
    }

    /**
     * Opens a session for a caller that proved the secret.
     *
     * @param from     the name the caller gives (its endpoint), bound into its proof
     * @param host     where the call came from; later calls of the session must come from there
     * @param response the caller's nonce and its proof (the nonce, then {@link ClusterSecret#proof})
     * @return the listener's proof, then the session
     * @throws RpcException when the challenge is not this node's, expired or used, or the proof is wrong (counted)
     */
    public byte[] authenticate(String from, InetAddress host, byte[] challenge, byte[] response) throws RpcException {
        long now = clock.nanoTime();
        expire(now);
        if (challenge == null || challenge.length != ClusterSecret.NONCE_BYTES || response == null
                || response.length != ClusterSecret.NONCE_BYTES + ClusterSecret.PROOF_BYTES) {
            throw refuse(host, "a malformed authentication");
        }
        byte[] mac = nonceKey.of(challenge, RANDOM_BYTES + 8);
        if (!MessageDigest.isEqual(Arrays.copyOf(mac, ClusterSecret.NONCE_BYTES - RANDOM_BYTES - 8),
                Arrays.copyOfRange(challenge, RANDOM_BYTES + 8, ClusterSecret.NONCE_BYTES))) {
            throw refuse(host, "a challenge this node did not issue");
        }
        long issued = ByteBuffer.wrap(challenge, RANDOM_BYTES, 8).getLong();
        if (now - issued > TimeUnit.SECONDS.toNanos(CHALLENGE_SECONDS) || now - issued < 0) {
            throw refuse(host, "an expired challenge");
        }
        byte[] clientNonce = Arrays.copyOf(response, ClusterSecret.NONCE_BYTES);
        byte[] proof = Arrays.copyOfRange(response, ClusterSecret.NONCE_BYTES, response.length);
        if (!secret.verifies(proof, CLIENT, challenge, clientNonce, name(from))) {
            throw refuse(host, "a wrong proof of the cluster secret (clusterSecret missing or different)");
        }
        if (usedNonces.putIfAbsent(ByteBuffer.wrap(challenge.clone()), issued) != null) {
            throw refuse(host, "a replayed authentication");
        }
        if (sessions.size() >= MAX_SESSIONS) {
            throw new RpcException("ehrelay: " + MAX_SESSIONS + " sessions open; retry later");
        }
        // a caller that opens a session again (it reconnected) gives up the ones it had: sessions do not pile up
        String name = from == null ? "" : from;
        sessions.values().removeIf(old -> old.host.equals(host) && old.from.equals(name));
        byte[] session = new byte[SESSION_BYTES];
        RANDOM.nextBytes(session);
        byte[] key = secret.proof(CALL_KEY, challenge, clientNonce, name(from), session);
        sessions.put(ByteBuffer.wrap(session.clone()), new Session(host, name, new Hmac(key), now));
        return ByteBuffer.allocate(ClusterSecret.PROOF_BYTES + SESSION_BYTES)
                .put(secret.proof(SERVER, challenge, clientNonce, name(from), session)).put(session).array();
    }

    /**
     * Checks a call's credential ({@link Credentials#next()}).
     *
     * @return the name the caller gave when it opened the session
     * @throws RpcException when it names no live session, comes from another host than the session's, is not
     *                      the session's MAC, or was served already (a replayed call) (counted)
     */
    public String check(byte[] credential, InetAddress host) throws RpcException {
        Session s = credential == null || credential.length != CREDENTIAL_BYTES ? null
                : sessions.get(ByteBuffer.wrap(credential, 0, SESSION_BYTES));
        if (s == null) {
            throw refuse(host, "a call without a valid session (clusterSecret missing or different, or the session "
                    + "ended)");
        }
        if (!s.host.equals(host)) {
            throw refuse(host, "a session opened from " + s.host.getHostAddress());
        }
        byte[] mac = s.key.of(credential, SESSION_BYTES + 8);
        if (!MessageDigest.isEqual(Arrays.copyOf(mac, CREDENTIAL_BYTES - SESSION_BYTES - 8),
                Arrays.copyOfRange(credential, SESSION_BYTES + 8, CREDENTIAL_BYTES))) {
            throw refuse(host, "a call whose credential is not its session's (forged)");
        }
        long now = clock.nanoTime();
        if (now - s.lastUsed > TimeUnit.SECONDS.toNanos(SESSION_IDLE_SECONDS)) {
            sessions.remove(ByteBuffer.wrap(credential, 0, SESSION_BYTES));
            throw refuse(host, "a session that ended (unused for " + SESSION_IDLE_SECONDS + " s)");
        }
        if (!s.take(ByteBuffer.wrap(credential, SESSION_BYTES, 8).getLong())) {
            throw refuse(host, "a call served already (replayed), or older than the " + WINDOW + " latest");
        }
        s.lastUsed = now;
        return s.from;
    }

    /** Open sessions (for tests and diagnostics). */
    public int openSessions() {
        return sessions.size();
    }

    private void expire(long now) {
        long nonceCutoff = now - TimeUnit.SECONDS.toNanos(CHALLENGE_SECONDS + 1);
        usedNonces.values().removeIf(issued -> issued - nonceCutoff < 0);
        long sessionCutoff = now - TimeUnit.SECONDS.toNanos(SESSION_IDLE_SECONDS);
        for (Iterator<Session> it = sessions.values().iterator(); it.hasNext(); ) {
            if (it.next().lastUsed - sessionCutoff < 0) {
                it.remove();
            }
        }
    }

    private RpcException refuse(InetAddress host, String why) {
        refused(host, why);
        return new RpcException(UNAUTHORIZED + why);
    }

    /** Counts and logs a call the transport refused itself (e.g. one that would not even name a session). */
    public void refused(InetAddress host, String why) {
        refusals.refused(host, why);
    }

    private static byte[] name(String from) {
        return (from == null ? "" : from).getBytes(StandardCharsets.UTF_8);
    }

    /** The caller's side of {@link #authenticate}. */
    public interface Listener {
        /** The listener's challenge. */
        byte[] challenge() throws IOException;

        /** Sends the response; returns the listener's answer. */
        byte[] authenticate(byte[] challenge, byte[] response) throws IOException;
    }

    /**
     * Opens a session with a listener: answers its challenge and checks its proof.
     *
     * @param from the name this node gives (its endpoint)
     * @return the session's credentials: {@link Credentials#next()} for every later call
     * @throws RpcException when the listener's answer does not prove the secret
     */
    public static Credentials open(ClusterSecret secret, String from, Listener listener) throws IOException {
        byte[] challenge = listener.challenge();
        if (challenge == null || challenge.length != ClusterSecret.NONCE_BYTES) {
            throw new RpcException("the peer's challenge is malformed");
        }
        byte[] clientNonce = ClusterSecret.nonce();
        byte[] response = ByteBuffer.allocate(ClusterSecret.NONCE_BYTES + ClusterSecret.PROOF_BYTES)
                .put(clientNonce).put(secret.proof(CLIENT, challenge, clientNonce, name(from))).array();
        byte[] answer = listener.authenticate(challenge, response);
        if (answer == null || answer.length != ClusterSecret.PROOF_BYTES + SESSION_BYTES) {
            throw new RpcException("the peer's answer to the authentication is malformed");
        }
        byte[] session = Arrays.copyOfRange(answer, ClusterSecret.PROOF_BYTES, answer.length);
        if (!secret.verifies(Arrays.copyOf(answer, ClusterSecret.PROOF_BYTES), SERVER, challenge,
                clientNonce, name(from), session)) {
            throw new RpcException("the peer does not prove the cluster secret (clusterSecret different)");
        }
        return new Credentials(session, secret.proof(CALL_KEY, challenge, clientNonce, name(from), session));
    }

    /** Whether a failure is a listener's refusal under {@link #check} or {@link #authenticate}. */
    public static boolean isRefusal(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().contains(UNAUTHORIZED)) {
                return true;
            }
        }
        return false;
    }
}
