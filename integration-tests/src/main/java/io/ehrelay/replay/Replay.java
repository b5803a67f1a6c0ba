package io.ehrelay.replay;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The two-node replay of EXPERIMENTS.md: E1 (10,000 elements of growing size), E2 (growing count of 1,280 B
 * elements) and E3 (synchronous put latency by payload), between two JVM processes on this machine, for each
 * transport and for a raw TCP loopback stream of the same bytes. Prints a table per step, writes CSV, a
 * Markdown table and an HTML page with charts. Run with {@code --help} for the options.
 */
public final class Replay {

    static final int[] E1_SIZES = {1280, 2560, 5120, 10240, 20480, 40960, 81920, 163840, 327680};
    static final int[] E2_COUNTS = {10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000};
    static final int[] E1_QUICK = {1280, 10240, 40960, 81920};
    static final int[] E2_QUICK = {10_000, 40_000, 160_000, 320_000};
    static final int[] E3_PAYLOADS = {0, 1024, 2048, 4096, 8192, 16384};

    final List<String> transports = new ArrayList<>(Profiles.ALL);
    final List<String> experiments = new ArrayList<>(List.of("e1", "e2", "e3"));
    int[] e1Sizes = E1_QUICK;
    int[] e2Counts = E2_QUICK;
    int e1Count = 10_000;
    int e2Size = 1280;
    int e3Calls = 2000;
    int[] e4Nodes = {4};
    int[] e4Sizes = {1024, 10240, 102400};
    /** 0: about 64 MB per writer, 500 to 20,000 elements. */
    int e4Count = 0;
    List<String> e4Modes = List.of("n-n");
    String e4Heap = "1536m";
    String heap = "2g";
    int reps = 1;
    long stepTimeoutSeconds = 600;
    String discovery = "manual";
    Path out = Path.of("results");
    private final List<StepResult> results = new ArrayList<>();

    /** A command line the replay cannot run: its message names the option and what it takes. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    static final List<String> EXPERIMENTS = List.of("e1", "e2", "e3", "e4", "threads");

    public static void main(String[] args) throws Exception {
        Replay r = new Replay();
        try {
            if (!r.parse(args)) {
                return;
            }
        } catch (UsageException e) {
            System.err.println("replay: " + e.getMessage());
            System.err.println("(./replay --help lists the options)");
            System.exit(2);
            return;
        }
        r.run();
        boolean anyFailed = r.results.stream().anyMatch(s -> !s.ok());
        System.exit(anyFailed ? 1 : 0);
    }

    /**
     * Reads the command line; {@code false} when it asked for the usage (printed). Every value is checked before
     * anything runs.
     *
     * @throws UsageException naming the option, the value and what it takes
     */
    boolean parse(String[] args) throws UsageException {
        boolean heapGiven = false;
        boolean full = false;
        boolean experimentsGiven = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-h":
                case "--help":
                case "help":
                    System.out.println(usage());
                    return false;
                case "--full":
                    // the full set: every step of E1 and E2, E3, the threads probe, E4 at 2, 4, 8 members n-n and 1-n
                    full = true;
                    e1Sizes = E1_SIZES;
                    e2Counts = E2_COUNTS;
                    e4Nodes = new int[] {2, 4, 8};
                    e4Modes = List.of("n-n", "1-n");
                    if (!heapGiven) {
                        heap = "6g";
                    }
                    break;
                case "--transports":
                    transports.clear();
                    transports.addAll(list(a, value(args, ++i, a)));
                    break;
                case "--experiments":
                    experimentsGiven = true;
                    experiments.clear();
                    experiments.addAll(oneOf(a, list(a, value(args, ++i, a).toLowerCase(Locale.ROOT)), EXPERIMENTS));
                    break;
                case "--e1-sizes":
                    e1Sizes = ints(a, value(args, ++i, a), 1, 64 << 20);
                    break;
                case "--e2-counts":
                    e2Counts = ints(a, value(args, ++i, a), 1, 100_000_000);
                    break;
                case "--e1-count":
                    e1Count = number(a, value(args, ++i, a), 1, 100_000_000);
                    break;
                case "--e4-nodes":
                    e4Nodes = ints(a, value(args, ++i, a), 2, 16);
                    break;
                case "--e4-sizes":
                    e4Sizes = ints(a, value(args, ++i, a), 1, 64 << 20);
                    break;
                case "--e4-count":
                    e4Count = number(a, value(args, ++i, a), 1, 100_000_000);
                    break;
                case "--e4-modes":
                    e4Modes = oneOf(a, list(a, value(args, ++i, a)), List.of("n-n", "1-n"));
                    break;
                case "--e4-heap":
                    e4Heap = heapSize(a, value(args, ++i, a));
                    break;
                case "--e3-calls":
                    e3Calls = number(a, value(args, ++i, a), 1, 10_000_000);
                    break;
                case "--heap":
                    heap = heapSize(a, value(args, ++i, a));
                    heapGiven = true;
                    break;
                case "--reps":
                    reps = number(a, value(args, ++i, a), 1, 100);
                    break;
                case "--step-timeout":
                    stepTimeoutSeconds = number(a, value(args, ++i, a), 1, 86_400);
                    break;
                case "--discovery":
                    discovery = oneOf(a, List.of(value(args, ++i, a)), List.of("manual", "multicast")).get(0);
                    break;
                case "--out":
                    out = Path.of(value(args, ++i, a));
                    break;
                default:
                    throw new UsageException("unknown option '" + a + "'");
            }
        }
        if (full && !experimentsGiven) {
            experiments.clear();
            experiments.addAll(List.of("e1", "e2", "e3", "e4", "threads"));
        }
        for (String t : transports) {
            if (!Profiles.isKnown(t)) {
                throw new UsageException("--transports: unknown transport '" + t + "'; known: "
                        + String.join(",", Profiles.ALL) + ", or any cache transport + '-sync'");
            }
        }
        return true;
    }

    private static String value(String[] args, int i, String option) throws UsageException {
        if (i >= args.length || args[i].startsWith("--")) {
            throw new UsageException(option + " needs a value");
        }
        return args[i];
    }

    private static List<String> list(String option, String csv) throws UsageException {
        List<String> items = new ArrayList<>();
        for (String item : csv.split(",", -1)) {
            if (item.trim().isEmpty()) {
                throw new UsageException(option + ": empty item in '" + csv + "'");
            }
            items.add(item.trim());
        }
        return items;
    }

    private static List<String> oneOf(String option, List<String> given, List<String> known) throws UsageException {
        for (String g : given) {
            if (!known.contains(g)) {
                throw new UsageException(option + ": unknown value '" + g + "'; one or more of: "
                        + String.join(",", known));
            }
        }
        return given;
    }

    static int number(String option, String text, int min, int max) throws UsageException {
        int n;
        try {
            n = Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new UsageException(option + ": '" + text + "' is not a whole number");
        }
        if (n < min || n > max) {
            throw new UsageException(option + ": " + n + " is out of range (" + min + " to " + max + ")");
        }
        return n;
    }

    private static int[] ints(String option, String csv, int min, int max) throws UsageException {
        List<String> items = list(option, csv);
        int[] out = new int[items.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = number(option, items.get(i), min, max);
        }
        return out;
    }

    private static String heapSize(String option, String text) throws UsageException {
        if (!text.matches("[1-9][0-9]*[kKmMgG]?")) {
            throw new UsageException(option + ": '" + text + "' is not a heap size (e.g. 1536m, 2g)");
        }
        return text;
    }

    static String usage() {
        return String.join("\n",
                "usage: ./replay [options]",
                "  --transports tcp,raw     transports to run (default: all: " + String.join(",", Profiles.ALL) + ");",
                "                           any cache transport + '-sync' runs E1/E2 with synchronous puts",
                "  --experiments e1,e2,e3   experiments to run (default: e1,e2,e3; also 'e4' for groups and",
                "                           'threads' for the threads-per-region probe: 10/100/1,000 caches)",
                "  --full                   the full set: all 9 steps of E1 and E2 (heap 6g), E3, E4 with 2, 4 and",
                "                           8 members n-n and 1-n, threads (--experiments narrows it)",
                "  --e1-sizes a,b,...       E1 element sizes (default quick: 1280,10240,40960,81920)",
                "  --e2-counts a,b,...      E2 element counts (default quick: 10000,40000,160000,320000)",
                "  --e1-count n             elements per E1 step (default 10000)",
                "  --e3-calls n             synchronous puts per E3 payload (default 2000)",
                "  --e4-nodes 4             E4 group sizes, comma-separated (default 4; E4 runs with --experiments e4)",
                "  --e4-modes n-n,1-n       E4: every member writes, or member 0 writes (default n-n)",
                "  --e4-sizes 1024,...      E4 message sizes (default 1024,10240,102400)",
                "  --e4-count n             E4 elements each writer puts (default: ~64 MB, 500 to 20,000)",
                "  --e4-heap 1536m          -Xms/-Xmx of each E4 member (default 1536m)",
                "  --heap 2g                -Xms/-Xmx of each node (default 2g, 6g with --full)",
                "  --reps n                 repetitions per step; the median is reported (default 1)",
                "  --step-timeout s         a step taking longer is a FAIL (default 600)",
                "  --discovery manual|multicast   how the writer finds the reader (default manual)",
                "  --out dir                where CSV, Markdown and HTML go (default results)");
    }

    /** Wall-clock time of the whole run, for the report. */
    Duration elapsed = Duration.ZERO;

    void run() throws Exception {
        long started = System.nanoTime();
        Files.createDirectories(out);
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        Path log = out.resolve("replay-" + stamp + ".log");
        System.out.printf("ehrelay replay: transports %s, experiments %s, heap %s per node, %d rep(s)%n", transports,
                experiments, heap, reps);
        System.out.println(Report.tableHeader());
        if (experiments.contains("e1")) {
            for (int size : e1Sizes) {
                for (String t : transports) {
                    record(median(() -> transfer("E1", t, e1Count, size, log)));
                }
            }
        }
        if (experiments.contains("e2")) {
            for (int count : e2Counts) {
                for (String t : transports) {
                    record(median(() -> transfer("E2", t, count, e2Size, log)));
                }
            }
        }
        if (experiments.contains("e3")) {
            for (String t : transports) {
                if (Profiles.isCacheTransport(t) && !Profiles.isSyncVariant(t)) { // E3 is synchronous already
                    for (StepResult r : latency(t, log)) {
                        record(r);
                    }
                }
            }
        }
        if (experiments.contains("e4")) {
            for (String mode : e4Modes) {
                for (int nodes : e4Nodes) {
                    for (int size : e4Sizes) {
                        for (String t : transports) {
                            if (Profiles.isCacheTransport(t) && !Profiles.isSyncVariant(t)) {
                                int count = e4Count > 0 ? e4Count
                                        : (int) Math.max(500, Math.min(20_000, (64L << 20) / size));
                                record(median(() -> group(t, mode, nodes, size, count, log)));
                            }
                        }
                    }
                }
            }
        }
        List<ThreadsProbe.Row> threadRows = List.of();
        if (experiments.contains("threads")) {
            System.out.println();
            System.out.println("threads-per-region probe (two nodes in this JVM):");
            threadRows = ThreadsProbe.run(transports, new int[] {10, 100, 1000});
        }
        elapsed = Duration.ofNanos(System.nanoTime() - started);
        Path csv = out.resolve("replay-" + stamp + ".csv");
        Report.writeCsv(results, csv);
        StringBuilder threadsMd = new StringBuilder();
        if (!threadRows.isEmpty()) {
            Path threadsCsv = out.resolve("replay-" + stamp + "-threads.csv");
            List<String> lines = new ArrayList<>();
            lines.add("transport,caches,jvm_threads_added,ehrelay_threads_per_node,threads_per_region_max,outcome");
            threadsMd.append("\nThreads-per-region probe:\n\n").append(ThreadsProbe.Row.HEADER).append('\n');
            for (ThreadsProbe.Row row : threadRows) {
                lines.add(row.csv());
                threadsMd.append(row.markdown()).append('\n');
            }
            Files.write(threadsCsv, lines);
        }
        Path md = out.resolve("replay-" + stamp + ".md");
        Files.writeString(md, Report.markdown(results, this) + threadsMd);
        Path html = out.resolve("replay-" + stamp + ".html");
        List<Report.Chart> charts = Report.charts(results, threadRows);
        Files.writeString(html, Report.html(results, threadRows, charts, this));
        for (Report.Chart c : charts) {
            if (!c.svg().isEmpty()) {
                Files.writeString(out.resolve("replay-" + stamp + "-" + c.slug() + ".svg"), c.standalone());
            }
        }
        System.out.println();
        System.out.println(Report.ratios(results));
        System.out.printf("run took %s%n", Report.duration(elapsed));
        System.out.println("results: " + csv + ", " + md + ", " + html + ", a .svg per chart (node logs: " + log + ")");
    }

    private void record(StepResult r) {
        results.add(r);
        // a progress line may precede: clear it first
        System.out.println("\r" + " ".repeat(100) + "\r" + Report.tableRow(r));
    }

    private interface Step {
        StepResult run() throws Exception;
    }

    private StepResult median(Step step) throws Exception {
        List<StepResult> runs = new ArrayList<>();
        for (int i = 0; i < reps; i++) {
            StepResult r = step.run();
            if (!r.ok()) {
                return r;
            }
            runs.add(r);
        }
        runs.sort(Comparator.comparingDouble(r -> r.seconds));
        return runs.get(runs.size() / 2);
    }

    List<String> nodeArgs(String role, String transport, int count, int size, String mode) {
        // a -sync variant runs its base transport with synchronous puts
        String m = "async".equals(mode) && Profiles.isSyncVariant(transport) ? "sync" : mode;
        return new ArrayList<>(List.of("role=" + role, "transport=" + Profiles.base(transport), "count=" + count,
                "size=" + size, "discovery=" + discoveryArg(), "mode=" + m));
    }

    private String multicastPort;

    private String discoveryArg() {
        if (!"multicast".equals(discovery)) {
            return "manual";
        }
        if (multicastPort == null) {
            try (ServerSocket s = new ServerSocket(0)) {
                multicastPort = Integer.toString(s.getLocalPort());
            } catch (IOException e) {
                multicastPort = "45588";
            }
        }
        return "multicast:" + multicastPort;
    }

    StepResult transfer(String experiment, String transport, int count, int size, Path log) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(stepTimeoutSeconds);
        int[] progress = {0};
        NodeProcess reader = null;
        NodeProcess writer = null;
        try {
            reader = NodeProcess.start("reader", heap, nodeArgs("reader", transport, count, size, "async"), log);
            String endpoint = reader.expect("READY", deadline, l -> { }).substring(6).trim();
            List<String> wargs = nodeArgs("writer", transport, count, size, "async");
            wargs.add("peer=" + endpoint);
            writer = NodeProcess.start("writer", heap, wargs, log);
            writer.expect("READY", deadline, l -> { }, reader);
            // both JVMs warm up on a few thousand elements first; the timed step starts on GO
            reader.expect("WARM", deadline, l -> { }, writer);
            writer.send("GO");
            String[] wrote = writer.expect("WROTE", deadline, l -> { }, reader).split(" ");
            NodeProcess w = writer;
            String[] done = reader.expect("DONE", deadline, l -> {
                if (l.startsWith("PROGRESS")) {
                    progress[0] = Integer.parseInt(l.substring(9).trim());
                    System.out.printf("\r  %s %-5s %,10d x %,7d B: %,d arrived", experiment, transport, count, size,
                            progress[0]);
                }
            }, w).split(" ");
            long firstPut = Long.parseLong(wrote[1]);
            long lastPut = Long.parseLong(wrote[2]);
            long dropped = Long.parseLong(wrote[4]);
            long failed = Long.parseLong(wrote[5]);
            long firstArrival = Long.parseLong(done[1]);
            long lastArrival = Long.parseLong(done[2]);
            int missing = Integer.parseInt(done[3]);
            int bad = Integer.parseInt(done[4]);
            String outcome = missing == 0 && bad == 0 && dropped == 0 ? "ok"
                    : "FAIL(missing " + missing + ", bad " + bad + ", dropped " + dropped + ", failed " + failed + ")";
            return new StepResult(experiment, transport, count, size, (lastArrival - firstPut) / 1e6,
                    (lastArrival - firstArrival) / 1e6, Long.parseLong(wrote[3]), Long.parseLong(done[5]), Double.NaN,
                    Double.NaN, Double.NaN, outcome, (lastPut - firstPut) / 1e6);
        } catch (NodeProcess.StepFailure e) {
            return StepResult.failed(experiment, transport, count, size, e.getMessage() + ", reader had "
                    + progress[0] + " of " + count);
        } catch (Exception e) {
            return StepResult.failed(experiment, transport, count, size, e.toString());
        } finally {
            if (writer != null) {
                writer.close();
            }
            if (reader != null) {
                reader.close();
            }
        }
    }

    /**
     * E4: a group of {@code nodes} member processes; in {@code n-n} every member puts {@code count} elements of
     * {@code size} bytes, in {@code 1-n} member 0 does. Each receiving member's rate is what it received divided
     * by the time from the first put to its last arrival; the step reports the median member (count = elements
     * each receiving member gets, so elements/s and MB/s are per member).
     */
    StepResult group(String transport, String mode, int nodes, int size, int count, Path log) {
        boolean all = "n-n".equals(mode);
        String experiment = "E4 " + mode + "/" + nodes;
        int perMember = all ? (nodes - 1) * count : count;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(stepTimeoutSeconds);
        List<NodeProcess> members = new ArrayList<>();
        try {
            int[] ports = new int[nodes];
            StringBuilder portList = new StringBuilder();
            for (int i = 0; i < nodes; i++) {
                ports[i] = ReplayNode.freePort();
                portList.append(i == 0 ? "" : ",").append(ports[i]);
            }
            for (int i = 0; i < nodes; i++) {
                boolean writes = all || i == 0;
                int expect = all ? perMember : i == 0 ? 0 : count;
                members.add(NodeProcess.start("member" + i, e4Heap, GroupMember.class, new ArrayList<>(List.of(
                        "transport=" + transport, "index=" + i, "ports=" + portList, "count=" + count,
                        "size=" + size, "writes=" + writes, "expect=" + expect)), log));
            }
            for (NodeProcess m : members) {
                m.expect("READY", deadline, l -> { });
            }
            for (NodeProcess m : members) {
                m.send("GO");
            }
            long go = Long.MAX_VALUE;
            for (NodeProcess m : members) {
                long t = Long.parseLong(m.expect("WROTE", deadline, l -> { }).split(" ")[1]);
                if (t > 0) {
                    go = Math.min(go, t);
                }
            }
            List<Double> seconds = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                String[] done = members.get(i).expect("DONE", deadline, l -> { }).split(" ");
                if (!all && i == 0) {
                    continue;
                }
                seconds.add((Long.parseLong(done[2]) - go) / 1e6);
            }
            seconds.sort(Double::compare);
            double median = seconds.get(seconds.size() / 2);
            return new StepResult(experiment, transport, perMember, size, median, Double.NaN, 0, 0, Double.NaN,
                    Double.NaN, Double.NaN, "ok");
        } catch (Exception e) {
            return StepResult.failed(experiment, transport, perMember, size, e.getMessage());
        } finally {
            for (NodeProcess m : members) {
                m.close();
            }
        }
    }

    List<StepResult> latency(String transport, Path log) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(stepTimeoutSeconds);
        List<StepResult> out = new ArrayList<>();
        NodeProcess reader = null;
        NodeProcess writer = null;
        String payloads = Arrays.stream(E3_PAYLOADS).mapToObj(Integer::toString).reduce((a, b) -> a + "," + b)
                .orElse("0");
        try {
            reader = NodeProcess.start("reader", heap, nodeArgs("reader", transport, Integer.MAX_VALUE, 0, "hold"), log);
            String endpoint = reader.expect("READY", deadline, l -> { }).substring(6).trim();
            List<String> wargs = nodeArgs("writer", transport, 0, 0, "latency");
            wargs.add("peer=" + endpoint);
            wargs.add("payloads=" + payloads);
            wargs.add("calls=" + e3Calls);
            writer = NodeProcess.start("writer", heap, wargs, log);
            writer.expect("READY", deadline, l -> { });
            for (int ignored : E3_PAYLOADS) {
                String[] lat = writer.expect("LAT", deadline, l -> { }).split(" ");
                double p99 = Double.parseDouble(lat[3]);
                out.add(new StepResult("E3", transport, e3Calls, Integer.parseInt(lat[1]), Double.NaN, Double.NaN, 0,
                        0, Double.parseDouble(lat[2]), p99, Double.parseDouble(lat[4]), "ok"));
            }
        } catch (Exception e) {
            out.add(StepResult.failed("E3", transport, e3Calls, 0, e.getMessage()));
        } finally {
            if (writer != null) {
                writer.close();
            }
            if (reader != null) {
                reader.close();
            }
        }
        return out;
    }
}
