package io.ehrelay.prometheus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.ehrelay.replay.ReplayNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shipped Prometheus setup, for real: two ehrelay nodes replicating over TCP on 127.0.0.1, each a JVM with
 * the JMX exporter agent and {@code docs/prometheus/jmx-exporter.yml}; a real Prometheus (Debian's package, put
 * on the PATH by {@code prometheus/ensure-prometheus.sh}) on 127.0.0.1 scraping both every second and loading
 * {@code docs/prometheus/ehrelay-alerts.yml}. Asserts what its HTTP API answers: metric names, labels, values,
 * and that every alerting rule evaluates. Also {@code promtool check rules/config} and the rules' unit tests.
 */
@Timeout(150)
class PrometheusIT {

    private static final int COUNT = 5_000;
    private static final int SIZE = 1_280;
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static final Pattern SAMPLE = Pattern.compile(
            "\\{\"metric\":\\{([^}]*)\\},\"value\":\\[[0-9.e+]+,\"([^\"]*)\"\\]\\}");
    private static final Pattern LABEL = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\":\"((?:[^\"\\\\]|\\\\.)*)\"");

    @TempDir
    Path dir;

    private final Path base = Path.of(System.getProperty("basedir", ".")).toAbsolutePath().normalize();
    private final Path docs = base.resolveSibling("docs").resolve("prometheus");
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<Process> children = new ArrayList<>();

    @Test
    void exporterConfig_rules_andARealPrometheus_agreeOnEveryMetricAndLabel() throws Exception {
        String prometheus = onPath("prometheus");
        String promtool = onPath("promtool");
        Path agent = agentJar();
        Path exporterConfig = docs.resolve("jmx-exporter.yml");
        Path alerts = docs.resolve("ehrelay-alerts.yml");
        assertThat(exporterConfig).isRegularFile();
        assertThat(alerts).isRegularFile();

        try {
            assertExit0(promtool, "check", "rules", alerts.toString());
            assertExit0(promtool, "test", "rules", base.resolve("prometheus/ehrelay-alerts-test.yml").toString());

            int readerPort = ReplayNode.freePort();
            int writerPort = ReplayNode.freePort();
            int webPort = ReplayNode.freePort();
            Path config = dir.resolve("prometheus.yml");
            Files.writeString(config, ""
                    + "global:\n"
                    + "  scrape_interval: 1s\n"
                    + "  scrape_timeout: 1s\n"
                    + "  evaluation_interval: 1s\n"
                    + "rule_files:\n"
                    + "  - '" + alerts + "'\n"
                    + "scrape_configs:\n"
                    + "  - job_name: ehrelay\n"
                    + "    static_configs:\n"
                    + "      - targets: ['127.0.0.1:" + readerPort + "', '127.0.0.1:" + writerPort + "']\n");
            assertExit0(promtool, "check", "config", config.toString());

            // Prometheus first: it starts while the nodes do
            Path promLog = dir.resolve("prometheus.log");
            start(promLog, prometheus, "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("tsdb"),
                    "--web.listen-address=127.0.0.1:" + webPort);
            String api = "http://127.0.0.1:" + webPort;

            Path nodeLog = dir.resolve("nodes.log");
            long deadline = System.nanoTime() + WAIT.toNanos();
            Node reader = node("reader", readerPort, exporterConfig, agent, nodeLog, List.of());
            String endpoint = reader.expect("READY", deadline).substring(6).trim();
            Node writer = node("writer", writerPort, exporterConfig, agent, nodeLog, List.of("peer=" + endpoint));
            writer.expect("READY", deadline);
            reader.expect("WARM", deadline);
            writer.send("GO");
            String[] wrote = writer.expect("WROTE", deadline).split(" ");
            assertThat(wrote[4]).as("dropped, as the writer counted it").isEqualTo("0");
            reader.expect("DONE", deadline);

            awaitHttp200(api + "/-/ready", deadline, promLog);

            // the writer: every event sent (one peer), none dropped or failed, a send latency measured
            String w = "cache_manager=~\"writer-.+\",transport=\"tcp\"";
            List<Sample> sent = await(api, "ehrelay_sent_total{" + w + ",cache=\"replay\"}", deadline,
                    s -> s.size() == 1 && s.get(0).value >= COUNT, promLog);
            assertThat(sent.get(0).labels).containsKeys("cache_manager", "cache", "transport", "instance")
                    .containsEntry("cache", "replay").containsEntry("transport", "tcp")
                    .containsEntry("instance", "127.0.0.1:" + writerPort);
            String writerName = sent.get(0).labels.get("cache_manager");
            // the CacheManager's own series: no cache label, the total over its caches (replay and warmup)
            Sample total = one(api, "ehrelay_sent_total{" + w + ",cache=\"\"}");
            assertThat(total.labels).doesNotContainKey("cache").containsEntry("cache_manager", writerName);
            assertThat(total.value).isGreaterThan(sent.get(0).value);

            Sample queue = one(api, "ehrelay_queue_events{" + w + ",cache=\"replay\"}");
            assertThat(queue.value).isBetween(0.0, (double) COUNT);
            assertThat(one(api, "ehrelay_queue_bytes{" + w + ",cache=\"\"}").value).isGreaterThanOrEqualTo(0);
            assertThat(one(api, "ehrelay_queue_capacity_events{" + w + "}").value).isPositive();
            assertThat(one(api, "ehrelay_queue_capacity_bytes{" + w + "}").value).isPositive();
            assertThat(one(api, "ehrelay_queue_high_water_events{" + w + "}").value).isPositive();

            List<Sample> latency = query(api, "ehrelay_send_latency_microseconds{" + w + ",cache=\"replay\"}");
            assertThat(latency).extracting(s -> s.labels.get("quantile"))
                    .containsExactlyInAnyOrder("0.5", "0.75", "0.95", "0.98", "0.99", "0.999");
            for (Sample s : latency) {
                // microseconds: above 0, below a minute
                assertThat(s.value).as("send latency %s", s.labels).isGreaterThan(0).isLessThan(60e6);
            }
            assertThat(one(api, "ehrelay_send_latency_microseconds_count{" + w + ",cache=\"replay\"}").value)
                    .isGreaterThanOrEqualTo(COUNT);
            assertThat(one(api, "ehrelay_send_latency_microseconds_max{" + w + ",cache=\"replay\"}").value)
                    .isPositive();
            assertThat(one(api, "ehrelay_send_latency_microseconds_mean{" + w + ",cache=\"replay\"}").value)
                    .isPositive();

            for (String zero : List.of("ehrelay_dropped_total", "ehrelay_failed_total",
                    "ehrelay_unencodable_total")) {
                List<Sample> z = query(api, zero + "{" + w + "}");
                assertThat(z).as(zero).extracting(s -> s.labels.getOrDefault("cache", ""))
                        .contains("", "replay", "warmup");
                assertThat(z).as(zero).allSatisfy(s -> assertThat(s.value).isZero());
            }
            assertThat(one(api, "ehrelay_enqueued_total{" + w + ",cache=\"replay\"}").value).isEqualTo(COUNT);
            assertThat(one(api, "ehrelay_sent_bytes_total{" + w + ",cache=\"replay\"}").value)
                    .isGreaterThanOrEqualTo((double) COUNT * SIZE);
            assertThat(one(api, "ehrelay_batch_events_count{" + w + "}").value).isPositive();
            assertThat(query(api, "ehrelay_batch_bytes{" + w + "}")).hasSize(6);
            assertThat(one(api, "ehrelay_peers_known{" + w + "}").value).isEqualTo(1);
            assertThat(one(api, "ehrelay_peers_reachable{" + w + "}").value).isEqualTo(1);
            assertThat(one(api, "ehrelay_threads{" + w + "}").value).isPositive();

            // the reader: every event received and applied, nothing invalidated or rejected
            String r = "cache_manager=~\"reader-.+\",transport=\"tcp\"";
            await(api, "ehrelay_applied_total{" + r + ",cache=\"replay\"}", deadline,
                    s -> s.size() == 1 && s.get(0).value >= COUNT, promLog);
            assertThat(one(api, "ehrelay_received_total{" + r + ",cache=\"replay\"}").value).isEqualTo(COUNT);
            assertThat(one(api, "ehrelay_received_bytes_total{" + r + "}").value).isPositive();
            assertThat(one(api, "ehrelay_apply_latency_microseconds{" + r + ",cache=\"replay\",quantile=\"0.99\"}")
                    .value).isPositive();
            for (String zero : List.of("ehrelay_invalidated_total", "ehrelay_rejected_total",
                    "ehrelay_unauthorized_total", "ehrelay_malformed_frames_total", "ehrelay_gaps_total",
                    "ehrelay_resyncs_total")) {
                assertThat(query(api, zero + "{" + r + "}")).as(zero).isNotEmpty()
                        .allSatisfy(s -> assertThat(s.value).isZero());
            }

            // names: only well-formed ehrelay_ metrics, none from the text gauge, every one labelled; read once both
            // nodes' series are there (a scrape that timed out on a loaded machine leaves a node's series stale
            // until its next one)
            List<String> expected = List.of("ehrelay_queue_events",
                    "ehrelay_sent_total", "ehrelay_send_latency_microseconds", "ehrelay_dropped_total",
                    "ehrelay_failed_total", "ehrelay_peers_known", "ehrelay_peers_reachable",
                    "ehrelay_queue_capacity_events", "ehrelay_threads_per_region", "ehrelay_bootstraps_total",
                    // what a TCP node registers beyond those (ExporterConfigTest checks every documented metric)
                    "ehrelay_overflow_waits_total", "ehrelay_overflow_wait_milliseconds_total",
                    "ehrelay_connections_in", "ehrelay_connections_out", "ehrelay_connect_failures_total",
                    "ehrelay_refused_connections_total", "ehrelay_inbound_buffer_bytes");
            List<Sample> all = await(api, "{__name__=~\"ehrelay_.+\"}", deadline,
                    s -> s.stream().map(x -> x.labels.get("instance")).distinct().count() == 2
                            && s.stream().map(x -> x.labels.get("__name__")).collect(Collectors.toSet())
                            .containsAll(expected), promLog);
            for (Sample s : all) {
                assertThat(s.labels.get("__name__")).matches("ehrelay_[a-z0-9]+(_[a-z0-9]+)*")
                        .doesNotContain("learned").doesNotContain("rate");
                assertThat(s.labels).containsKeys("cache_manager", "transport").doesNotContainKey("_objectname");
            }
            assertThat(all).extracting(s -> s.labels.get("__name__")).containsAll(expected);

            // every alerting rule loaded and evaluated against these series without an error
            String rules = awaitBody(api + "/api/v1/rules?type=alert", deadline,
                    b -> b.contains("\"health\":\"ok\"") && !b.contains("\"health\":\"unknown\""), promLog);
            assertThat(rules).doesNotContain("\"health\":\"err\"");
            assertThat(Pattern.compile("\"health\":\"ok\"").matcher(rules).results().count()).isEqualTo(12);
            // and none fires on a healthy pair (a queue alert may be pending while the load ran: only "firing")
            assertThat(query(api, "ALERTS{alertstate=\"firing\"}")).isEmpty();

            writer.close();
            reader.close();
        } finally {
            for (int i = children.size() - 1; i >= 0; i--) {
                stop(children.get(i));
            }
        }
    }

    // ---- processes ---------------------------------------------------------------------------------------------

    private static String onPath(String command) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path p = Path.of(d, command);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        return fail("'" + command + "' is not on the PATH: PrometheusIT needs a real Prometheus. Run "
                + "integration-tests/prometheus/ensure-prometheus.sh (as root it installs Debian's prometheus "
                + "package; the Maven build runs it in pre-integration-test), or install Prometheus 2.x yourself.");
    }

    private Path agentJar() throws IOException {
        Path dirJar = base.resolve("target/prometheus");
        if (Files.isDirectory(dirJar)) {
            try (Stream<Path> s = Files.list(dirJar)) {
                Path jar = s.filter(p -> p.getFileName().toString().startsWith("jmx_prometheus_javaagent-"))
                        .findFirst().orElse(null);
                if (jar != null) {
                    return jar;
                }
            }
        }
        return fail("no jmx_prometheus_javaagent jar in " + dirJar + ": the Maven build copies it there "
                + "(maven-dependency-plugin execution prometheus-jmx-agent, phase package)");
    }

    private void assertExit0(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        children.add(p);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("%s finished", String.join(" ", cmd)).isTrue();
        assertThat(p.exitValue()).as("exit code of %s; output:%n%s", String.join(" ", cmd), out).isZero();
        children.remove(p);
    }

    private Process start(Path log, String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        children.add(p);
        return p;
    }

    private static void stop(Process p) {
        p.destroy();
        try {
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** A {@link ReplayNode} JVM with the JMX exporter agent on 127.0.0.1:{@code port}. */
    private Node node(String role, int port, Path exporterConfig, Path agent, Path log, List<String> more)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-javaagent:" + agent + "=127.0.0.1:" + port + ":" + exporterConfig,
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", System.getProperty("java.class.path"),
                ReplayNode.class.getName(),
                "role=" + role, "transport=tcp", "count=" + COUNT, "size=" + SIZE, "discovery=manual",
                "mode=async"));
        cmd.addAll(more);
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        children.add(p);
        return new Node(role, p, log);
    }

    /** A node's stdout lines ({@code READY}, {@code WARM}, {@code WROTE}, {@code DONE}...) and its stdin. */
    private static final class Node {
        private final String role;
        private final Process process;
        private final Path log;
        private final Writer stdin;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        Node(String role, Process process, Path log) {
            this.role = role;
            this.process = process;
            this.log = log;
            this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread pump = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line; (line = r.readLine()) != null; ) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    lines.add("ERROR " + e);
                }
                lines.add("EOF");
            }, "prometheus-it-" + role);
            pump.setDaemon(true);
            pump.start();
        }

        String expect(String prefix, long deadlineNanos) throws Exception {
            while (true) {
                long left = deadlineNanos - System.nanoTime();
                String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
                if (line == null) {
                    return fail("timeout waiting for " + role + " " + prefix + "; node log:\n" + tail(log));
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
                if (line.startsWith("ERROR") || line.equals("EOF")) {
                    return fail(role + " failed waiting for " + prefix + ": " + line + "; node log:\n" + tail(log));
                }
            }
        }

        void send(String line) throws IOException {
            stdin.write(line + "\n");
            stdin.flush();
        }

        void close() throws Exception {
            send("EXIT");
            assertThat(process.waitFor(20, TimeUnit.SECONDS)).as("%s exits on EXIT", role).isTrue();
        }
    }

    private static String tail(Path log) {
        try {
            List<String> l = Files.readAllLines(log);
            return String.join("\n", l.subList(Math.max(0, l.size() - 60), l.size()));
        } catch (IOException e) {
            return "(" + e + ")";
        }
    }

    // ---- Prometheus's HTTP API ------------------------------------------------------------------------------

    /** One instant-vector sample: its labels (with {@code __name__}) and value. */
    record Sample(Map<String, String> labels, double value) {
    }

    private String get(String url) throws IOException, InterruptedException {
        HttpResponse<String> res = http.send(HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        if (res.statusCode() != 200) {
            throw new IOException("HTTP " + res.statusCode() + " from " + url + ": " + res.body());
        }
        return res.body();
    }

    List<Sample> query(String api, String promql) throws IOException, InterruptedException {
        String body = get(api + "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        assertThat(body).as("answer to %s", promql).contains("\"status\":\"success\"")
                .contains("\"resultType\":\"vector\"");
        List<Sample> out = new ArrayList<>();
        Matcher m = SAMPLE.matcher(body);
        while (m.find()) {
            Map<String, String> labels = new LinkedHashMap<>();
            Matcher l = LABEL.matcher(m.group(1));
            while (l.find()) {
                labels.put(l.group(1), l.group(2));
            }
            out.add(new Sample(labels, Double.parseDouble(m.group(2))));
        }
        return out;
    }

    private Sample one(String api, String promql) throws IOException, InterruptedException {
        List<Sample> s = query(api, promql);
        assertThat(s).as("series of %s", promql).hasSize(1);
        return s.get(0);
    }

    /** Queries until {@code ok} holds (Prometheus scrapes every second), at most until the deadline. */
    private List<Sample> await(String api, String promql, long deadline, Predicate<List<Sample>> ok, Path promLog)
            throws Exception {
        List<Sample> last = List.of();
        while (System.nanoTime() < deadline) {
            last = query(api, promql);
            if (ok.test(last)) {
                return last;
            }
            Thread.sleep(250);
        }
        return fail("Prometheus did not answer as expected for " + promql + " within " + WAIT.toSeconds()
                + " s; last answer " + last + "; scrape targets: " + get(api + "/api/v1/targets")
                + "\nprometheus log:\n" + tail(promLog));
    }

    private String awaitBody(String url, long deadline, Predicate<String> ok, Path promLog) throws Exception {
        String last = "";
        while (System.nanoTime() < deadline) {
            last = get(url);
            if (ok.test(last)) {
                return last;
            }
            Thread.sleep(250);
        }
        return fail("no expected answer from " + url + ": " + last + "\nprometheus log:\n" + tail(promLog));
    }

    private void awaitHttp200(String url, long deadline, Path promLog) throws Exception {
        while (System.nanoTime() < deadline) {
            try {
                get(url);
                return;
            } catch (IOException e) {
                Thread.sleep(200);
            }
        }
        fail("Prometheus did not become ready at " + url + "; log:\n" + tail(promLog));
    }
}
