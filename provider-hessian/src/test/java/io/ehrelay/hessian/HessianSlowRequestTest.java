package io.ehrelay.hessian;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.ContractCluster;
import io.ehrelay.contract.Jmx;
import io.ehrelay.internal.Streams;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.testing.SocketAudit;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Requests whose bytes stop arriving must not stall replication: with honest replication running between two
 * nodes with a cluster secret, raw connections to the receiver send headers and half a body (or half the headers)
 * and stall. Honest puts keep arriving within a few seconds; the node drops each stalled request after its bound
 * (requestReadMillis, 10 s, plus 1 s per MiB of body) and closes its connection; the node's HTTP threads stay
 * within maxHttpThreads. Outsiders (no session: refused before anything large is read) and insiders (a valid
 * session, whose large bodies are read) alike. And 2,000 idle connections hold no thread.
 */
@Timeout(120)
class HessianSlowRequestTest {

    private static final String TEXT = "correct-horse-battery-staple";
    private static final String SECRET = "clusterSecret=" + TEXT;
    private static final long READ_MILLIS = HessianListenerSettings.DEFAULT_REQUEST_READ_MILLIS;

    private final ContractCluster cluster = new ContractCluster(HessianContractTest.FIXTURE);
    private final List<Socket> sockets = new ArrayList<>();

    @AfterEach
    void stop() {
        for (Socket s : sockets) {
            try {
                s.close();
            } catch (IOException e) {
                // closing
            }
        }
        cluster.close();
    }

    /** Live threads of a node whose name says they serve its HTTP requests. */
    private static int httpThreads(CacheManager cm) {
        String marker = "ehrelay-hessian-" + cm.getName() + "-http-";
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().contains(marker) && t.isAlive()) {
                n++;
            }
        }
        return n;
    }

    /** Threads of the node's HTTP pool that are inside a request (reading it, or serving it). */
    private static int busyHttpThreads(CacheManager cm) {
        String marker = "ehrelay-hessian-" + cm.getName() + "-http-";
        int n = 0;
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            if (e.getKey().getName().contains(marker)
                    && Arrays.stream(e.getValue()).anyMatch(f -> f.getClassName().endsWith("ServerImpl$Exchange"))) {
                n++;
            }
        }
        return n;
    }

    private static int port(String endpoint) {
        return URI.create(endpoint).getPort();
    }

    private Socket connect(int port) throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        s.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        return s;
    }

    private static byte[] head(int contentLength, byte[] session) {
        String h = "POST /ehrelay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + HessianWire.CONTENT_TYPE
                + "\r\nContent-Length: " + contentLength + "\r\n"
                + (session == null ? "" : HessianSettings.SESSION_HEADER + ": "
                + Base64.getEncoder().encodeToString(session) + "\r\n") + "\r\n";
        return h.getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Headers and the first half of a call's body, then nothing. */
    private Socket halfBody(int port, byte[] call, byte[] session) throws IOException {
        Socket s = connect(port);
        OutputStream out = s.getOutputStream();
        out.write(head(call.length, session));
        out.write(call, 0, call.length / 2);
        out.flush();
        return s;
    }

    /** Half the headers, then nothing. */
    private Socket halfHeaders(int port) throws IOException {
        Socket s = connect(port);
        byte[] h = head(100, null);
        s.getOutputStream().write(Arrays.copyOf(h, h.length / 2));
        s.getOutputStream().flush();
        return s;
    }

    /** Milliseconds from {@code sinceNanos} until the node closed {@code s} (EOF or reset), or -1 after the wait. */
    private static long closedAfter(Socket s, long sinceNanos, long waitMillis) throws IOException {
        long deadline = sinceNanos + TimeUnit.MILLISECONDS.toNanos(waitMillis);
        InputStream in = s.getInputStream();
        byte[] buf = new byte[4096];
        while (true) {
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                return -1;
            }
            s.setSoTimeout((int) Math.max(1, left));
            try {
                if (in.read(buf) < 0) {
                    break;
                }
            } catch (SocketTimeoutException e) {
                return -1;
            } catch (IOException e) {
                break; // reset: closed too
            }
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sinceNanos);
    }

    /** A raw call: status and body. */
    private static byte[] call(String url, String method, Envelope e) throws IOException {
        byte[] body = HessianWire.call(method, e);
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setFixedLengthStreamingMode(body.length);
        try (OutputStream out = c.getOutputStream()) {
            out.write(body);
        }
        try (InputStream in = c.getResponseCode() < 400 ? c.getInputStream() : c.getErrorStream()) {
            return in == null ? new byte[0] : in.readAllBytes();
        }
    }

    /** A session of an insider: it holds the cluster secret. */
    private static RpcSessions.Credentials session(String url) throws IOException {
        return RpcSessions.open(ClusterSecret.of(TEXT), "insider", new RpcSessions.Listener() {
            @Override
            public byte[] challenge() throws IOException {
                return HessianWire.readBinaryReply(call(url, "challenge", Envelope.of("insider", null)));
            }

            @Override
            public byte[] authenticate(byte[] challenge, byte[] response) throws IOException {
                byte[] both = Arrays.copyOf(challenge, challenge.length + response.length);
                System.arraycopy(response, 0, both, challenge.length, response.length);
                return HessianWire.readBinaryReply(call(url, "authenticate", Envelope.of("insider", both)));
            }
        });
    }

    /** Honest replication from a to b while the attack lasts: the latency of each put, and b's HTTP threads. */
    private static final class Honest implements AutoCloseable {
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicInteger maxThreads = new AtomicInteger();
        final List<Long> latencies = new CopyOnWriteArrayList<>();
        final Future<?> run;

        Honest(CacheManager a, CacheManager b) {
            run = thread.submit(() -> {
                for (int i = 0; i < 10_000 && !stop.get(); i++) {
                    long t0 = System.nanoTime();
                    String key = "honest-" + i;
                    a.getCache("async").put(new Element(key, "v" + i));
                    long deadline = t0 + TimeUnit.SECONDS.toNanos(30);
                    while (b.getCache("async").get(key) == null && System.nanoTime() < deadline) {
                        maxThreads.accumulateAndGet(httpThreads(b), Math::max);
                        Thread.sleep(5);
                    }
                    latencies.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                    maxThreads.accumulateAndGet(httpThreads(b), Math::max);
                    Thread.sleep(50);
                }
                return null;
            });
        }

        /** Waits until {@code n} honest puts in all have arrived. */
        void awaitReplicated(int n) {
            Await.until(() -> latencies.size() >= n, () -> "honest puts replicated: " + latencies.size() + " of " + n);
        }

        long maxLatency() {
            return latencies.stream().mapToLong(Long::longValue).max().orElse(-1);
        }

        /** Stops the puts and waits for the last one; rethrows what the loop threw. */
        void finish() throws Exception {
            stop.set(true);
            try {
                run.get(60, TimeUnit.SECONDS);
            } finally {
                thread.shutdownNow();
            }
        }

        @Override
        public void close() {
            stop.set(true);
            thread.shutdownNow();
        }
    }

    private void stalledRequests_doNotStallReplication(boolean insider, int stallers, boolean alsoHalfHeaders)
            throws Exception {
        CacheManager a = cluster.start("a", SECRET);
        CacheManager b = cluster.start("b", SECRET);
        String url = cluster.endpoint(b);
        int port = port(url);
        Jmx jb = cluster.jmx(b);
        a.getCache("async").put(new Element("warm", "up"));
        Await.until(() -> b.getCache("async").get("warm") != null, () -> "replication a → b");
        RpcSessions.Credentials session = insider ? session(url) : null;
        // an outsider may send at most 4 KiB without a session: it stalls in such a body; an insider in 1 MiB
        byte[] body = insider ? HessianWire.call("post", Envelope.of("insider", new byte[1 << 20]))
                : HessianWire.call("challenge", Envelope.of("outsider", new byte[3900]));
        long boundMillis = READ_MILLIS + body.length * 1000L / RequestGuard.MIN_BYTES_PER_SECOND;
        List<Socket> stalled = new ArrayList<>();
        long start;
        long maxLatency;
        int maxThreads;
        long firstClosed = Long.MAX_VALUE;
        long lastClosed = 0;
        try (Honest honest = new Honest(a, b)) {
            honest.awaitReplicated(3); // honest traffic flows before the attack
            start = System.nanoTime();
            for (int i = 0; i < stallers; i++) {
                stalled.add(halfBody(port, body, session == null ? null : session.next()));
                if (alsoHalfHeaders) {
                    stalled.add(halfHeaders(port));
                }
            }
            for (Socket s : stalled) {
                long closed = closedAfter(s, start, boundMillis + 5000);
                assertThat(closed).as("the node closes a stalled connection within its bound and a tick").isPositive();
                firstClosed = Math.min(firstClosed, closed);
                lastClosed = Math.max(lastClosed, closed);
            }
            honest.awaitReplicated(honest.latencies.size() + 3); // a little honest traffic after the attack
            maxThreads = Math.max(honest.maxThreads.get(), httpThreads(b));
            honest.finish();
            // the dropped requests' threads were unblocked: none is left inside a request
            Await.until(() -> busyHttpThreads(b) == 0,
                    () -> busyHttpThreads(b) + " of b's HTTP threads still inside a request");
            maxLatency = honest.maxLatency();
            assertThat(honest.latencies).as("honest puts during the attack").hasSizeGreaterThan(10);
        }
        System.out.printf("[hessian] %d %s stalled in half a body of %d bytes%s: honest puts max %d ms; stalled "
                        + "connections closed after %d–%d ms (bound %d ms); b's HTTP threads at most %d; "
                        + "slowRequests %d%n", stallers, insider ? "insiders (valid session)" : "outsiders", body.length,
                alsoHalfHeaders ? " (and as many in half their headers)" : "", maxLatency, firstClosed, lastClosed,
                boundMillis, maxThreads, jb.managerCount("slowRequests"));
        assertThat(maxLatency).as("longest honest put during the attack, ms").isLessThan(5000);
        assertThat(maxThreads).as("b's HTTP threads").isLessThanOrEqualTo(HessianListenerSettings.DEFAULT_MAX_HTTP_THREADS);
        assertThat(jb.managerCount("slowRequests")).isEqualTo(stalled.size());
        if (stalled.size() < HessianListenerSettings.DEFAULT_MAX_HTTP_THREADS - 4) {
            // threads to spare: each stalled request is dropped at its bound, not before
            assertThat(firstClosed).isGreaterThanOrEqualTo(Math.min(READ_MILLIS, boundMillis) - 200);
        }
        assertThat(lastClosed).isLessThan(boundMillis + 2000);
        assertThat(a.getCache("async").getSize()).isEqualTo(b.getCache("async").getSize());
    }

    @Test
    void insidersAnnouncingLargeBodies_holdAtMostInboundBufferMaxBytes_replicationFlows() throws Exception {
        String limits = SECRET + ", maxFrameBytes=4m, inboundBufferMaxBytes=8m";
        CacheManager a = cluster.start("a", limits);
        CacheManager b = cluster.start("b", limits);
        String url = cluster.endpoint(b);
        Jmx jb = cluster.jmx(b);
        RpcSessions.Credentials session = session(url);
        byte[] body = HessianWire.call("post", Envelope.of("insider", new byte[3 << 20]));
        try (Honest honest = new Honest(a, b)) {
            for (int i = 0; i < 4; i++) {
                halfBody(port(url), body, session.next());
            }
            // two bodies of 3 MB fit the node's 8 MB, the others wait for room (and get 503 after 10 s)
            Await.until(() -> jb.managerGauge("inboundBufferBytes").longValue() >= 2L * body.length,
                    () -> "two bodies reserved: " + jb.managerGauge("inboundBufferBytes"));
            honest.awaitReplicated(honest.latencies.size() + 10); // the other two wait while honest puts flow
            long held = jb.managerGauge("inboundBufferBytes").longValue();
            System.out.printf("[hessian] 4 insiders half-sending 3 MB bodies: %d bytes reserved (bound %d)%n", held,
                    8 << 20);
            assertThat(held).isEqualTo(2L * body.length);
            honest.finish();
            assertThat(honest.maxLatency()).as("longest honest put meanwhile, ms").isLessThan(5000);
        }
    }

    @Test
    void outsiders_halfABodyAndHalfTheirHeaders_areDroppedAfterTheBound_replicationFlows() throws Exception {
        stalledRequests_doNotStallReplication(false, 8, true);
    }

    @Test
    void insidersWithASession_eightHalfSentLargeBodies_areDroppedAfterTheBound_replicationFlows() throws Exception {
        stalledRequests_doNotStallReplication(true, 8, false);
    }

    @Test
    void insidersWithASession_64HalfSentLargeBodies_slowestMakeRoom_replicationFlows() throws Exception {
        stalledRequests_doNotStallReplication(true, 64, false);
    }

    @Test
    void outsidersAnnouncingALargeBody_get401_andTheirConnectionsCloseWithinASecond() throws Exception {
        CacheManager b = cluster.start("b", SECRET);
        int port = port(cluster.endpoint(b));
        Jmx jb = cluster.jmx(b);
        List<Socket> refused = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < 8; i++) {
            // more than a call without a session may carry, and none of it sent: refused from the headers; the
            // JDK's server then drains the unread body, which never comes
            Socket s = connect(port);
            s.getOutputStream().write(head(100_000, null));
            s.getOutputStream().flush();
            refused.add(s);
        }
        long last = 0;
        for (Socket s : refused) {
            byte[] status = new byte[12];
            s.setSoTimeout(5000);
            int got = Streams.readFully(s.getInputStream(), status, 0, status.length);
            assertThat(new String(status, 0, got, StandardCharsets.ISO_8859_1)).isEqualTo("HTTP/1.1 401");
            long closed = closedAfter(s, start, 5000);
            assertThat(closed).as("the node closes the refused connection").isPositive();
            last = Math.max(last, closed);
        }
        System.out.printf("[hessian] 8 outsiders announcing 100 kB without a session: 401, closed after %d ms%n",
                last);
        assertThat(last).isLessThan(RequestGuard.REFUSAL_MILLIS + 1500);
        assertThat(jb.managerCount("unauthorized")).isEqualTo(8);
    }

    /** Connections the kernel completed on the node's listening socket at {@code port} that it has not accepted yet. */
    private static int acceptBacklog(int port) {
        try {
            for (SocketAudit.Socket s : SocketAudit.self().sockets()) {
                if (s.protocol.equals("tcp") && s.port == port) {
                    return s.queued;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new AssertionError("no listening socket on port " + port + " in this process");
    }

    private static long usedHeap() throws InterruptedException {
        Runtime rt = Runtime.getRuntime();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(50);
        }
        return rt.totalMemory() - rt.freeMemory();
    }

    @Test
    void twoThousandIdleConnections_holdNoThread_andReplicationFlows() throws Exception {
        CacheManager a = cluster.start("a", SECRET);
        CacheManager b = cluster.start("b", SECRET);
        int port = port(cluster.endpoint(b));
        a.getCache("async").put(new Element("warm", "up"));
        Await.until(() -> b.getCache("async").get("warm") != null, () -> "replication a → b");
        int threadsBefore = Thread.activeCount();
        int httpBefore = httpThreads(b);
        long heapBefore = usedHeap();
        int n = 2000;
        for (int i = 0; i < n; i++) {
            connect(port);
        }
        Await.until(() -> acceptBacklog(port) == 0, () -> acceptBacklog(port) + " connections not accepted yet");
        long heapAfter = usedHeap();
        int threadsAfter = Thread.activeCount();
        int httpAfter = httpThreads(b);
        long t0 = System.nanoTime();
        a.getCache("sync").put(new Element("through", "idle connections"));
        long putMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertThat(b.getCache("sync").get("through")).isNotNull();
        System.out.printf("[hessian] %d idle connections to one node: JVM threads %d → %d, the node's HTTP threads "
                        + "%d → %d, used heap (both ends, after GC) %.1f → %.1f MiB (%+d bytes per connection); a sync put "
                        + "through took %d ms%n", n, threadsBefore, threadsAfter, httpBefore, httpAfter,
                heapBefore / 1048576.0, heapAfter / 1048576.0, (heapAfter - heapBefore) / n, putMillis);
        assertThat(threadsAfter - threadsBefore).as("threads for idle connections").isLessThanOrEqualTo(4);
        assertThat(httpAfter).isLessThanOrEqualTo(HessianListenerSettings.DEFAULT_HTTP_THREADS + 2);
        assertThat(heapAfter - heapBefore).as("heap for %d idle connections", n).isLessThan(64L << 20);
        if (Boolean.getBoolean("ehrelay.measureIdleClose")) {
            // how long the JDK's server keeps a connection that never sent a byte (sun.net.httpserver.idleInterval)
            long start = System.nanoTime();
            long closed = closedAfter(sockets.get(sockets.size() - 1), start, 90_000);
            System.out.printf("[hessian] the node closed the idle connections after about %d s of idleness%n",
                    TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0) + 1);
            assertThat(closed).isPositive();
        }
    }
}
