package io.ehrelay.hessian;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpServer;
import io.ehrelay.spi.Clock;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The measurement behind the Hessian transport's choice of HTTP server and client (a benchmark that prints
 * numbers, not a test). The same Hessian work on each request (parse the envelope and its payload with
 * {@link HessianWire}, answer an empty reply) behind the JDK's {@code com.sun.net.httpserver} and behind an
 * embedded Jetty 12 (core handler, no servlets), called by the JDK's {@code java.net.http} client and by
 * {@code HttpURLConnection} and by ehrelay's own blocking client ({@link HttpConnections}), one call in flight as
 * the transport does. Everything on 127.0.0.1.
 *
 * <p>Run: {@code benchmarks/run HttpServerBench [rounds]}.
 */
public final class HttpServerBench {

    private static final int LATENCY_CALLS = 2_000;
    private static final int BULK_CALLS = 300;
    private static final int BULK_BYTES = 1 << 20;

    private HttpServerBench() {
    }

    /** A server under test: where it listens, and how it stops. */
    private interface Endpoint extends AutoCloseable {
        String url();

        @Override
        void close() throws IOException;
    }

    /** A client under test: one call, body in, reply body out. */
    private interface Caller extends AutoCloseable {
        byte[] call(byte[] body) throws Exception;

        @Override
        default void close() {
        }
    }

    static byte[] answer(InputStream body, long length) throws IOException {
        HessianWire.Call call = HessianWire.readCall(new BufferedInputStream(body, 64 * 1024), length);
        if (!(call.argument instanceof Envelope)) {
            throw new IOException("not an envelope");
        }
        return HessianWire.reply(null);
    }

    static Endpoint jdkServer() throws IOException {
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 128);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        server.setExecutor(pool);
        server.createContext("/ehrelay", exchange -> {
            try (exchange) {
                long length = Long.parseLong(exchange.getRequestHeaders().getFirst("Content-Length"));
                byte[] reply = answer(exchange.getRequestBody(), length);
                exchange.getResponseHeaders().set("Content-Type", HessianWire.CONTENT_TYPE);
                exchange.sendResponseHeaders(200, reply.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(reply);
                }
            }
        });
        server.start();
        String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/ehrelay";
        return new Endpoint() {
            @Override
            public String url() {
                return url;
            }

            @Override
            public void close() {
                server.stop(0);
                pool.shutdownNow();
            }
        };
    }

    static Endpoint jettyServer() throws Exception {
        QueuedThreadPool threads = new QueuedThreadPool(8, 2);
        Server server = new Server(threads);
        ServerConnector connector = new ServerConnector(server, 1, 1);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                byte[] reply = answer(Content.Source.asInputStream(request), request.getLength());
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, HessianWire.CONTENT_TYPE);
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, reply.length);
                response.write(true, ByteBuffer.wrap(reply), callback);
                return true;
            }
        });
        server.start();
        String url = "http://127.0.0.1:" + connector.getLocalPort() + "/ehrelay";
        return new Endpoint() {
            @Override
            public String url() {
                return url;
            }

            @Override
            public void close() throws IOException {
                try {
                    server.stop();
                } catch (Exception e) {
                    throw new IOException(e);
                }
            }
        };
    }

    static Caller javaNetHttp(String url) {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(pool).build();
        URI uri = URI.create(url);
        return new Caller() {
            @Override
            public byte[] call(byte[] body) throws Exception {
                HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(uri)
                        .header("Content-Type", HessianWire.CONTENT_TYPE)
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() != 200) {
                    throw new IOException("HTTP " + r.statusCode());
                }
                return r.body();
            }

            @Override
            public void close() {
                pool.shutdownNow();
            }
        };
    }

    static Caller blocking(String url) throws IOException {
        HttpConnections connections = new HttpConnections(url, null, HessianWire.CONTENT_TYPE, List.of(), 2000,
                30_000, 64L << 20, Clock.SYSTEM);
        return new Caller() {
            @Override
            public byte[] call(byte[] body) throws Exception {
                HttpConnections.Answer a = connections.post(body);
                if (a.status != 200) {
                    throw new IOException("HTTP " + a.status);
                }
                return a.body;
            }

            @Override
            public void close() {
                connections.close();
            }
        };
    }

    static Caller urlConnection(String url) throws IOException {
        URL u = URI.create(url).toURL();
        return body -> {
            HttpURLConnection c = (HttpURLConnection) u.openConnection();
            c.setRequestMethod("POST");
            c.setDoOutput(true);
            c.setFixedLengthStreamingMode(body.length);
            c.setRequestProperty("Content-Type", HessianWire.CONTENT_TYPE);
            try (OutputStream out = c.getOutputStream()) {
                out.write(body);
            }
            if (c.getResponseCode() != 200) {
                throw new IOException("HTTP " + c.getResponseCode());
            }
            try (InputStream in = c.getInputStream()) {
                return in.readAllBytes();
            }
        };
    }

    private static byte[] body(int payloadBytes) throws IOException {
        byte[] payload = new byte[payloadBytes];
        Arrays.fill(payload, (byte) 7);
        return HessianWire.call("post", Envelope.of("http://127.0.0.1:1/ehrelay", payload));
    }

    /** @return p50, p99, max in microseconds */
    private static double[] latency(Caller caller, int payloadBytes) throws Exception {
        byte[] body = body(payloadBytes);
        for (int i = 0; i < 500; i++) {
            caller.call(body);
        }
        long[] nanos = new long[LATENCY_CALLS];
        for (int i = 0; i < nanos.length; i++) {
            long t = System.nanoTime();
            caller.call(body);
            nanos[i] = System.nanoTime() - t;
        }
        Arrays.sort(nanos);
        return new double[] {nanos[nanos.length / 2] / 1e3, nanos[nanos.length * 99 / 100] / 1e3,
                nanos[nanos.length - 1] / 1e3};
    }

    /** @return MB/s of payload, one call in flight */
    private static double bulk(Caller caller) throws Exception {
        byte[] body = body(BULK_BYTES);
        for (int i = 0; i < 30; i++) {
            caller.call(body);
        }
        long t = System.nanoTime();
        for (int i = 0; i < BULK_CALLS; i++) {
            caller.call(body);
        }
        return (double) BULK_CALLS * BULK_BYTES / ((System.nanoTime() - t) / 1e9) / 1e6;
    }

    private static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return v[v.length / 2];
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        String[] servers = {"jdk", "jetty"};
        String[] clients = {"java.net.http", "HttpURLConnection", "blocking socket"};
        int[] sizes = {0, 4096, 16384};
        // results[server][client]: bulk MB/s per round, and p50/p99 per size per round
        List<List<List<Double>>> mbs = new ArrayList<>();
        List<List<List<List<double[]>>>> lat = new ArrayList<>();
        for (int s = 0; s < servers.length; s++) {
            mbs.add(new ArrayList<>());
            lat.add(new ArrayList<>());
            for (int c = 0; c < clients.length; c++) {
                mbs.get(s).add(new ArrayList<>());
                List<List<double[]>> perSize = new ArrayList<>();
                for (int z = 0; z < sizes.length; z++) {
                    perSize.add(new ArrayList<>());
                }
                lat.get(s).add(perSize);
            }
        }
        for (int round = 0; round < rounds; round++) {
            for (int s = 0; s < servers.length; s++) {
                try (Endpoint server = s == 0 ? jdkServer() : jettyServer()) {
                    for (int c = 0; c < clients.length; c++) {
                        try (Caller caller = c == 0 ? javaNetHttp(server.url())
                                : c == 1 ? urlConnection(server.url()) : blocking(server.url())) {
                            mbs.get(s).get(c).add(bulk(caller));
                            for (int z = 0; z < sizes.length; z++) {
                                lat.get(s).get(c).get(z).add(latency(caller, sizes[z]));
                            }
                        }
                    }
                }
            }
            System.out.printf(Locale.ROOT, "round %d of %d done%n", round + 1, rounds);
        }
        System.out.printf(Locale.ROOT, "%nHessian calls over HTTP on 127.0.0.1, one in flight, medians of %d rounds%n",
                rounds);
        System.out.printf(Locale.ROOT, "%-6s %-18s %12s", "server", "client", "1 MiB MB/s");
        for (int size : sizes) {
            System.out.printf(Locale.ROOT, " %8s %8s", size + "B p50", "p99 µs");
        }
        System.out.println();
        for (int s = 0; s < servers.length; s++) {
            for (int c = 0; c < clients.length; c++) {
                System.out.printf(Locale.ROOT, "%-6s %-18s %12.1f", servers[s], clients[c],
                        median(mbs.get(s).get(c)));
                for (int z = 0; z < sizes.length; z++) {
                    List<double[]> runs = lat.get(s).get(c).get(z);
                    List<Double> p50 = new ArrayList<>();
                    List<Double> p99 = new ArrayList<>();
                    for (double[] r : runs) {
                        p50.add(r[0]);
                        p99.add(r[1]);
                    }
                    System.out.printf(Locale.ROOT, " %8.0f %8.0f", median(p50), median(p99));
                }
                System.out.println();
            }
        }
    }
}
