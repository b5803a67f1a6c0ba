package io.ehrelay.hessian;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Base64;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.rpc.RpcException;
import io.ehrelay.internal.rpc.RpcService;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.PeerGate;
import io.ehrelay.spi.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's HTTP endpoint: {@code POST} of one Hessian call whose argument is an {@link Envelope}. Refuses,
 * before reading the body, requests without the cluster token (401, counted in {@code unauthorized}) and
 * bodies over the frame limit (413); refuses calls carrying anything but an envelope (400, counted in
 * {@code rejected}) and unparsable bodies (400, counted in {@code malformedFrames}). Tells the
 * {@link RequestGuard} what it is doing, so that a body or an answer that does not move in time is dropped (the
 * connection closed, counted in {@code slowRequests}), but never a request being served. Thread-safe.
 */
final class RpcHttpHandler implements HttpHandler {

    private static final Logger LOG = LoggerFactory.getLogger(RpcHttpHandler.class);

    private static final int BUFFER = 64 * 1024;

    /** The largest body of a call without a session: opening one ({@code challenge}, {@code authenticate}). */
    private static final int MAX_SESSIONLESS_BODY = 4096;

    /** Bodies up to this size are not counted against the budget (a small call never waits for room). */
    private static final int SMALL_BODY = 64 * 1024;
    /** How long a body waits for room before its request is refused (503). */
    private static final long BUDGET_WAIT_MILLIS = 10_000;

    private final RpcService relay;
    private final byte[] token;
    private final long maxBodyBytes;
    private final TransportMetrics metrics;
    private final TransportMetrics.Count unauthorized;

    private final PeerGate gate;
    private final RpcSessions sessions;

    private InboundBudget budget;

    /**
     * @param gate     admits hosts that send requests without authenticating (no cluster token or secret), or
     *                 {@code null} when TLS client certificates authenticate every caller
     * @param sessions the node's sessions when it has a cluster secret, else {@code null}
     */
    RpcHttpHandler(RpcService relay, String token, long maxBodyBytes, TransportMetrics metrics,
                   PeerGate gate, RpcSessions sessions) {
        this.gate = gate;
        this.sessions = sessions;
        this.relay = relay;
        this.token = token == null ? null : token.getBytes(StandardCharsets.UTF_8);
        this.maxBodyBytes = maxBodyBytes;
        this.metrics = metrics;
        this.unauthorized = metrics.count(MetricNames.UNAUTHORIZED);
    }

    /** Bounds the bytes of the bodies being read at once, for all callers together. */
    RpcHttpHandler withBudget(InboundBudget budget) {
        this.budget = budget;
        return this;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        GuardedRequest request = RequestGuard.current();
        long reserved = 0;
        try {
            request.headersRead(exchange.getRemoteAddress());
            if (!"POST".equals(exchange.getRequestMethod())) {
                respond(exchange, request, 405, new byte[0]);
                return;
            }
            InetAddress host = exchange.getRemoteAddress().getAddress();
            String sender = null;
            long maxBody = maxBodyBytes;
            if (sessions != null) {
                String given = exchange.getRequestHeaders().getFirst(HessianSettings.SESSION_HEADER);
                if (given == null) {
                    maxBody = MAX_SESSIONLESS_BODY; // only opening a session: read little, refuse the rest
                } else {
                    try {
                        sender = sessions.check(decode(given), host);
                    } catch (RpcException e) {
                        respond(exchange, request, 401, new byte[0]);
                        return;
                    }
                }
            }
            if (token == null && sessions == null && gate != null) {
                // nothing authenticates the request: only hosts unauthenticatedPeers admits are served
                if (!gate.admits(host, "request")) {
                    respond(exchange, request, 403, new byte[0]);
                    return;
                }
            } else if (token != null) {
                String given = exchange.getRequestHeaders().getFirst(HessianSettings.TOKEN_HEADER);
                if (given == null || !MessageDigest.isEqual(token, given.getBytes(StandardCharsets.UTF_8))) {
                    unauthorized.mark();
                    LOG.warn("ehrelay: refused a request from {} without the cluster token (counted in unauthorized)",
                            exchange.getRemoteAddress());
                    respond(exchange, request, 401, new byte[0]);
                    return;
                }
            }
            String lengthHeader = exchange.getRequestHeaders().getFirst("Content-Length");
            long length;
            try {
                length = lengthHeader == null ? -1 : Long.parseLong(lengthHeader.trim());
            } catch (NumberFormatException e) {
                length = -1;
            }
            if (length < 0) {
                respond(exchange, request, 411, new byte[0]);
                return;
            }
            if (length > maxBody) {
                if (maxBody < maxBodyBytes) {
                    sessions.refused(host, "a call of " + length + " bytes without a session");
                    respond(exchange, request, 401, new byte[0]);
                    return;
                }
                metrics.markRejected();
                LOG.warn("ehrelay: refused a body of {} bytes from {} (limit {}; counted in rejected)", length,
                        exchange.getRemoteAddress(), maxBodyBytes);
                respond(exchange, request, 413, new byte[0]);
                return;
            }
            if (budget != null && length > SMALL_BODY) {
                // the body is read into one array of its size: take its share of the node's bound first
                boolean room;
                try {
                    room = budget.reserve(length, BUDGET_WAIT_MILLIS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("dropped while waiting for room for its body");
                }
                if (!room) {
                    metrics.markRejected();
                    LOG.warn("ehrelay: refused a body of {} bytes from {}: the bodies being read hold "
                            + "inboundBufferMaxBytes={} bytes (counted in rejected)", length,
                            exchange.getRemoteAddress(), budget.max());
                    respond(exchange, request, 503, new byte[0]);
                    return;
                }
                reserved = length;
            }
            HessianWire.Call call;
            request.body(length);
            try {
                // a buffer sized to the body (at most 64 KiB): a small call does not allocate a large one
                int buffer = (int) Math.max(512, Math.min(BUFFER, length));
                call = HessianWire.readCall(new BufferedInputStream(request.counting(exchange.getRequestBody()),
                        buffer), length, budget);
            } catch (IOException e) {
                if (request.dropped()) {
                    throw e; // too slow, not malformed: counted in slowRequests, the connection is closed
                }
                metrics.markMalformedFrame();
                LOG.warn("ehrelay: refused a malformed call from {} (counted in malformedFrames): {}",
                        exchange.getRemoteAddress(), e.getMessage());
                respond(exchange, request, 400, HessianWire.fault("malformed call"));
                return;
            }
            if (!(call.argument instanceof Envelope)) {
                metrics.markRejected();
                LOG.warn("ehrelay: refused a call '{}' from {} carrying {} instead of an envelope (counted in rejected)",
                        call.method, exchange.getRemoteAddress(),
                        call.argument == null ? "null" : call.argument.getClass().getName());
                respond(exchange, request, 400, HessianWire.fault("only envelopes are accepted"));
                return;
            }
            request.serving();
            byte[] answer;
            if (sessions != null && sender == null) {
                answer = openSession(call.method, (Envelope) call.argument, host);
            } else {
                Envelope envelope = (Envelope) call.argument;
                if (sender != null) {
                    envelope.from = sender; // the name the session was opened under, whatever the call claims
                }
                answer = dispatch(call.method, envelope);
            }
            request.answer(answer.length);
            respond(exchange, request, 200, answer);
        } finally {
            if (reserved > 0) {
                budget.release(reserved);
            }
            exchange.close();
        }
    }

    private byte[] dispatch(String method, Envelope e) throws IOException {
        try {
            switch (method) {
                case "hello":
                    relay.hello(e.from);
                    return HessianWire.reply(null);
                case "deliver":
                    relay.deliver(e.from, e.payloadBuffer(), e::recycle);
                    return HessianWire.reply(null);
                case "post":
                    relay.post(e.from, e.payloadBuffer(), e::recycle);
                    return HessianWire.reply(null);
                case "openState":
                    return HessianWire.reply(relay.openState(e.cacheName));
                case "nextState":
                    return HessianWire.reply(relay.nextState(e.transferId, e.maxChunkBytes));
                default:
                    return HessianWire.fault("unknown method " + method);
            }
        } catch (RpcException ex) {
            return HessianWire.fault(ex.getMessage());
        }
    }

    /** Without a session only a session can be opened. */
    private byte[] openSession(String method, Envelope e, InetAddress host) throws IOException {
        try {
            if ("challenge".equals(method)) {
                return HessianWire.reply(sessions.challenge());
            }
            if ("authenticate".equals(method) && e.payload != null
                    && e.payload.length == ClusterSecret.NONCE_BYTES * 2
                    + ClusterSecret.PROOF_BYTES) {
                int n = ClusterSecret.NONCE_BYTES;
                return HessianWire.reply(sessions.authenticate(e.from, host, Arrays.copyOf(e.payload, n),
                        Arrays.copyOfRange(e.payload, n, e.payload.length)));
            }
            sessions.refused(host, "a call '" + method + "' without a session (clusterSecret missing or different)");
            return HessianWire.fault(RpcSessions.UNAUTHORIZED + "no session: session refused: "
                    + "clusterSecret missing or different (this node serves only callers that prove it)");
        } catch (RpcException ex) {
            return HessianWire.fault(ex.getMessage());
        }
    }

    private static byte[] decode(String base64) {
        try {
            return Base64.getDecoder().decode(base64.trim());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Answers; a refusal (any status but 200) gets a short bound, its unread body being unwanted. */
    private static void respond(HttpExchange exchange, GuardedRequest request, int status, byte[] body)
            throws IOException {
        if (status != 200) {
            request.refusing();
        }
        exchange.getResponseHeaders().set("Content-Type", HessianWire.CONTENT_TYPE);
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
