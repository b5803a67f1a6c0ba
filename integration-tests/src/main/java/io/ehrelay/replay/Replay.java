package io.ehrelay.replay;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import io.ehrelay.testing.SocketAudit;

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
    /** The default set (a verdict in minutes): two steps of E1 and E2, three E3 payloads, the default profile. */
    static final int[] E1_VERDICT = {10240, 40960};
    static final int[] E2_VERDICT = {40_000, 160_000};
    static final int[] E3_VERDICT = {0, 4096, 16384};

    static final List<String> EXPERIMENTS = Arrays.asList("e1", "e2", "e3", "e4", "threads");

    final List<String> transports = new ArrayList<>(Profiles.ALL);
    final List<String> experiments = new ArrayList<>(Arrays.asList("e1", "e2", "e3"));
    int[] e1Sizes = E1_VERDICT;
    int[] e2Counts = E2_VERDICT;
    int e1Count = 10_000;
    int e2Size = 1280;
    int e3Calls = 1000;
    int[] e3Payloads = E3_VERDICT;
    int[] e4Nodes = {4};
    int[] e4Sizes = {1024, 10240, 102400};
    /** 0: about 64 MB per writer, 500 to 20,000 elements. */
    int e4Count = 0;
    List<String> e4Modes = Arrays.asList("n-n");
    String e4Heap = "1536m";
    String heap = "2g";
    /** The profiles each step runs under, in order: {@code default} (what users run) and {@code tuned}. */
    List<String> profiles = new ArrayList<>(Arrays.asList(NodeProcess.DEFAULT));
    int reps = 1;
    long stepTimeoutSeconds = 600;
    String discovery = "manual";
    Path out = Paths.get("results");
    private final List<StepResult> results = new ArrayList<>();

    /** Wall-clock time of the whole run, for the report. */
    Duration elapsed = Duration.ZERO;
    /** {@code --render}: the CSV of an earlier run to write the report of again; null for a run. */
    Path render;
    /** True while writing a report again from {@link #render}. */
    boolean rendered;
    /** The progress line; silent until {@link #run()} starts one (tests call the steps directly). */
    Progress progress = new Progress(new PrintStream(new OutputStream() {
        @Override
        public void write(int b) {
        }
    }), false, 0, 0);
    private int experimentWidth = Report.EXPERIMENT_WIDTH;
    private int transportWidth = Report.TRANSPORT_WIDTH;

    private String multicastPort;

    /** A command line the replay cannot run: its message names the option and what it takes. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

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
        if (r.render != null) {
            r.renderAgain();
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
        boolean quick = false;
        boolean experimentsGiven = false;
        Set<String> given = new HashSet<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            given.add(a);
            switch (a) {
                case "-h":
                case "--help":
                case "help":
                    System.out.println(usage());
                    return false;
                case "--full":
                    // the full set: every step of E1 and E2, E3, the threads probe, E4 at 2, 4, 8 members n-n and 1-n
                    full = true;
                    break;
                case "--quick":
                    // the quick set: four steps of E1 and E2, every E3 payload, under both profiles
                    quick = true;
                    break;
                case "--profile": {
                    String p = value(args, ++i, a);
                    profiles.clear();
                    if ("both".equals(p)) {
                        profiles.addAll(Arrays.asList(NodeProcess.DEFAULT, NodeProcess.TUNED));
                    } else if (NodeProcess.DEFAULT.equals(p) || NodeProcess.TUNED.equals(p)) {
                        profiles.add(p);
                    } else {
                        throw new UsageException("--profile: '" + p + "' is not default, tuned or both");
                    }
                    break;
                }
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
                    e4Modes = oneOf(a, list(a, value(args, ++i, a)), Arrays.asList("n-n", "1-n"));
                    break;
                case "--e4-heap":
                    e4Heap = heapSize(a, value(args, ++i, a));
                    break;
                case "--e3-payloads":
                    e3Payloads = ints(a, value(args, ++i, a), 0, 64 << 20);
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
                    discovery = oneOf(a, Arrays.asList(value(args, ++i, a)), Arrays.asList("manual", "multicast"))
                            .get(0);
                    break;
                case "--out":
                    out = Paths.get(value(args, ++i, a));
                    break;
                case "--render":
                    render = Paths.get(value(args, ++i, a));
                    if (!Files.isRegularFile(render)) {
                        throw new UsageException("--render: no such file '" + render + "'");
                    }
                    break;
                default:
                    throw new UsageException("unknown option '" + a + "'");
            }
        }
        if (full && quick) {
            throw new UsageException("--full and --quick: choose one set");
        }
        if (!full && !quick && !given.contains("--transports")) {
            // the verdict set: stock's synchronous variant (half a minute at E2 alone) is the sets' to run
            transports.removeIf(Profiles::isSyncVariant);
        }
        if (full || quick) {
            // a set's steps, unless given: options narrow a set, whatever their order on the line
            if (!given.contains("--e1-sizes")) {
                e1Sizes = full ? E1_SIZES : E1_QUICK;
            }
            if (!given.contains("--e2-counts")) {
                e2Counts = full ? E2_COUNTS : E2_QUICK;
            }
            if (!given.contains("--e3-payloads")) {
                e3Payloads = E3_PAYLOADS;
            }
            if (!given.contains("--e3-calls")) {
                e3Calls = 2000;
            }
            if (!given.contains("--profile")) {
                profiles = new ArrayList<>(Arrays.asList(NodeProcess.DEFAULT, NodeProcess.TUNED));
            }
        }
        if (full) {
            if (!given.contains("--e4-nodes")) {
                e4Nodes = new int[] {2, 4, 8};
            }
            if (!given.contains("--e4-modes")) {
                e4Modes = Arrays.asList("n-n", "1-n");
            }
            if (!heapGiven) {
                heap = "6g";
            }
        }
        if (full && !experimentsGiven) {
            experiments.clear();
            experiments.addAll(Arrays.asList("e1", "e2", "e3", "e4", "threads"));
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
                "  (no set)                 a verdict in minutes: E1 at 10240,40960 B, E2 at 40000,160000",
                "                           elements, E3 at payloads 0,4096,16384 x 1000 puts, default profile,",
                "                           every transport but the -sync variants",
                "  --quick                  the quick set: E1 and E2 at 4 steps each, E3 at 6 payloads x 2000",
                "                           puts, under both profiles",
                "  --full                   the full set: all 9 steps of E1 and E2 (heap 6g), E3, E4 with 2, 4 and",
                "                           8 members n-n and 1-n, threads, both profiles (--experiments narrows it)",
                "  --e1-sizes a,b,...       E1 element sizes (--quick: 1280,10240,40960,81920)",
                "  --e2-counts a,b,...      E2 element counts (--quick: 10000,40000,160000,320000)",
                "  --e1-count n             elements per E1 step (default 10000)",
                "  --e3-payloads a,b,...    E3 payload sizes (--quick and --full: 0,1024,2048,4096,8192,16384)",
                "  --e3-calls n             synchronous puts per E3 payload (default 1000; 2000 in the sets)",
                "  --e4-nodes 4             E4 group sizes, comma-separated (default 4; E4 runs with --experiments e4)",
                "  --e4-modes n-n,1-n       E4: every member writes, or member 0 writes (default n-n)",
                "  --e4-sizes 1024,...      E4 message sizes (default 1024,10240,102400)",
                "  --e4-count n             E4 elements each writer puts (default: ~64 MB, 500 to 20,000)",
                "  --e4-heap 1536m          -Xms/-Xmx of each E4 member (default 1536m)",
                "  --heap 2g                heap of each node (default 2g, 6g with --full): -Xmx in the default",
                "                           profile, -Xms and -Xmx in the tuned one",
                "  --profile default        default: the provider's default properties and -Xmx only (what users",
                "                           run); tuned: -Xms = -Xmx, -XX:+AlwaysPreTouch, and the writer's queue",
                "                           blocks (overflowPolicy=block, overflowBlockMillis=600000,",
                "                           queueMaxBytes=8m); both (--quick, --full): every step under each, a",
                "                           report per profile, ratios within each",
                "  --reps n                 repetitions per step; the median is reported (default 1)",
                "  --step-timeout s         a step taking longer is a FAIL (default 600)",
                "  --discovery manual|multicast   how the writer finds the reader (default manual)",
                "  --out dir                where CSV, Markdown and HTML go (default results)",
                "  --render run.csv         run nothing: write the report (Markdown, HTML, charts) of an earlier",
                "                           run's CSV again, next to it (its -threads.csv too, if present)");
    }

    /** One step of the run: what the progress line names, its estimated cost (relative units), what it does. */
    private static final class Planned {
        final String label;
        final double weight;
        final Action action;

        Planned(String label, double weight, Action action) {
            this.label = label;
            this.weight = weight;
            this.action = action;
        }
    }

    private interface Action {
        void run() throws Exception;
    }

    /**
     * A relative cost estimate of a transfer step for the time left: two JVMs and a warm-up, plus the bytes (a
     * synchronous run waits for a round trip per put).
     */
    private double transferWeight(String transport, int count, int size) {
        double perElement = Profiles.isSyncVariant(transport) ? 150e-6 : 5e-6;
        return reps * (4 + (double) count * size / 100e6 + count * perElement);
    }

    void run() throws Exception {
        final long started = System.nanoTime();
        Files.createDirectories(out);
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss"));
        final Path log = out.resolve("replay-" + stamp + ".log");
        final List<ThreadsProbe.Row> threadRows = new ArrayList<>();
        List<Planned> plan = plan(log, threadRows);
        double totalWeight = 0;
        for (Planned p : plan) {
            totalWeight += p.weight;
        }
        progress = new Progress(System.out, System.console() != null, plan.size(), totalWeight);
        System.out.printf("ehrelay replay: transports %s, experiments %s, heap %s per node, %d rep(s), profiles %s, "
                + "%d steps%n", transports, experiments, heap, reps, profiles, plan.size());
        System.out.println(ReportConsole.tableHeader(experimentWidth, transportWidth));
        for (Planned p : plan) {
            progress.begin(p.label, p.weight);
            p.action.run();
            progress.end();
        }
        progress.clear();
        elapsed = Duration.ofNanos(System.nanoTime() - started);
        Path csv = out.resolve("replay-" + stamp + ".csv");
        ReportConsole.writeCsv(results, csv);
        if (!threadRows.isEmpty()) {
            Path threadsCsv = out.resolve("replay-" + stamp + "-threads.csv");
            List<String> lines = new ArrayList<>();
            lines.add("transport,caches,jvm_threads_added,ehrelay_threads_per_node,threads_per_region_max,outcome");
            for (ThreadsProbe.Row row : threadRows) {
                lines.add(row.csv());
            }
            Files.write(threadsCsv, lines);
        }
        String name = "replay-" + stamp;
        List<StepResult> all = new ArrayList<>(results);
        for (String profile : profilesOf(all)) {
            String reportName = reportName(name, all, profile);
            int svgs = writeReport(out, reportName, threadRows, only(all, profile));
            System.out.println();
            System.out.println("profile " + profile + (NodeProcess.DEFAULT.equals(profile)
                    ? " (the provider's defaults, -Xmx only):" : " (-Xms = -Xmx, AlwaysPreTouch, blocking queue):"));
            for (String line : ReportConsole.consoleSummary(only(all, profile), elapsed, out.resolve(reportName + ".html"),
                    out.resolve(reportName + ".md"), csv, svgs, log)) {
                System.out.println(line);
            }
        }
    }

    /** The profiles present in {@code rows}, in the order they ran. */
    private static List<String> profilesOf(List<StepResult> rows) {
        List<String> seen = new ArrayList<>();
        for (StepResult r : rows) {
            if (!seen.contains(r.profile)) {
                seen.add(r.profile);
            }
        }
        if (seen.isEmpty()) {
            seen.add(NodeProcess.TUNED);
        }
        return seen;
    }

    /** A run of one profile keeps its plain name; with more, each profile's report is suffixed with it. */
    private static String reportName(String name, List<StepResult> rows, String profile) {
        return profilesOf(rows).size() > 1 ? name + "-" + profile : name;
    }

    private static List<StepResult> only(List<StepResult> rows, String profile) {
        List<StepResult> out = new ArrayList<>();
        for (StepResult r : rows) {
            if (r.profile.equals(profile)) {
                out.add(r);
            }
        }
        return out;
    }

    /**
     * {@code --render}: the report of an earlier run written again from its CSV (and its {@code -threads.csv}),
     * next to it, under the CSV's own name; the report says it was re-rendered and the run's own header is lost.
     */
    void renderAgain() throws IOException {
        for (String line : dataRows(render)) {
            results.add(StepResult.parseCsv(line));
        }
        List<ThreadsProbe.Row> threadRows = new ArrayList<>();
        String name = render.getFileName().toString().replaceFirst("\\.csv$", "");
        Path dir = render.toAbsolutePath().getParent();
        Path threadsCsv = dir.resolve(name + "-threads.csv");
        if (Files.isRegularFile(threadsCsv)) {
            for (String row : dataRows(threadsCsv)) {
                threadRows.add(ThreadsProbe.Row.parseCsv(row));
            }
        }
        rendered = true;
        for (String profile : profilesOf(results)) {
            String reportName = reportName(name, results, profile);
            List<StepResult> rows = only(results, profile);
            writeReport(dir, reportName, threadRows, rows);
            for (ReportVerdicts.Verdict v : ReportVerdicts.verdicts(rows)) {
                System.out.println(v);
            }
            System.out.println("report: " + dir.resolve(reportName + ".html") + " (and .md, charts)");
        }
    }

    /** A CSV file's rows after its header, blank ones left out. */
    private static List<String> dataRows(Path csv) throws IOException {
        List<String> rows = new ArrayList<>();
        List<String> lines = Files.readAllLines(csv, StandardCharsets.UTF_8);
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
            if (!line.trim().isEmpty()) {
                rows.add(line);
            }
        }
        return rows;
    }

    /**
     * The report of {@link #results}: {@code name.md}, {@code name.html} and a {@code name-<chart>.svg} per chart,
     * in {@code dir}.
     *
     * @return the number of charts written
     */
    private int writeReport(Path dir, String name, List<ThreadsProbe.Row> threadRows, List<StepResult> rows)
            throws IOException {
        write(dir.resolve(name + ".md"), Report.markdown(rows, threadRows, this, name + "-"));
        List<ReportCharts.Chart> charts = ReportCharts.charts(rows, threadRows);
        write(dir.resolve(name + ".html"), Report.html(rows, threadRows, charts, this));
        int svgs = 0;
        for (ReportCharts.Chart c : charts) {
            if (!c.svg().isEmpty()) {
                write(dir.resolve(name + "-" + c.slug() + ".svg"), c.standalone());
                svgs++;
            }
        }
        return svgs;
    }

    private static void write(Path file, String text) throws IOException {
        Files.write(file, text.getBytes(StandardCharsets.UTF_8));
    }

    /** Every step the options ask for, in run order (known up front, for "step n of N" and the time left). */
    private List<Planned> plan(final Path log, final List<ThreadsProbe.Row> threadRows) {
        List<Planned> plan = new ArrayList<>();
        Set<String> experimentLabels = new LinkedHashSet<>();
        if (experiments.contains("e1")) {
            experimentLabels.add("E1");
            for (final int size : e1Sizes) {
                for (final String t : transports) {
                    plan.add(new Planned(String.format(Locale.ROOT, "E1 %s %,d x %,d B", t, e1Count, size),
                            transferWeight(t, e1Count, size), () -> record(median(() -> transfer("E1", t, e1Count,
                            size, log)))));
                }
            }
        }
        if (experiments.contains("e2")) {
            experimentLabels.add("E2");
            for (final int count : e2Counts) {
                for (final String t : transports) {
                    plan.add(new Planned(String.format(Locale.ROOT, "E2 %s %,d x %,d B", t, count, e2Size),
                            transferWeight(t, count, e2Size), () -> record(median(() -> transfer("E2", t, count,
                            e2Size, log)))));
                }
            }
        }
        if (experiments.contains("e3")) {
            experimentLabels.add("E3");
            for (final String t : transports) {
                if (Profiles.isCacheTransport(t) && !Profiles.isSyncVariant(t)) { // E3 is synchronous already
                    plan.add(new Planned("E3 " + t + ", " + e3Payloads.length + " payloads x " + e3Calls
                            + " synchronous puts", 6 + e3Payloads.length * e3Calls * 300e-6, () -> {
                                for (StepResult r : latency(t, log)) {
                                    record(r);
                                }
                            }));
                }
            }
        }
        if (experiments.contains("e4")) {
            for (final String mode : e4Modes) {
                for (final int nodes : e4Nodes) {
                    experimentLabels.add("E4 " + mode + "/" + nodes);
                    for (final int size : e4Sizes) {
                        for (final String t : transports) {
                            if (Profiles.isCacheTransport(t) && !Profiles.isSyncVariant(t)) {
                                final int count = e4Count > 0 ? e4Count
                                        : (int) Math.max(500, Math.min(20_000, (64L << 20) / size));
                                double moved = (double) count * size * ("n-n".equals(mode) ? nodes * (nodes - 1)
                                        : nodes - 1);
                                plan.add(new Planned(String.format(Locale.ROOT, "E4 %s/%d %s %,d x %,d B", mode, nodes,
                                        t, count, size), reps * (2 * nodes + moved / 50e6),
                                        () -> record(median(() -> group(t, mode, nodes, size, count, log)))));
                            }
                        }
                    }
                }
            }
        }
        if (experiments.contains("threads")) {
            plan.add(new Planned("threads-per-region probe (two nodes in this JVM)", 10 * transports.size(), () -> {
                progress.clear();
                System.out.println("threads-per-region probe (two nodes in this JVM):");
                threadRows.addAll(ThreadsProbe.run(transports, new int[] {10, 100, 1000}));
            }));
        }
        experimentWidth = ReportConsole.width(3, experimentLabels);
        transportWidth = ReportConsole.width("transport".length(), transports);
        List<Planned> perProfile = new ArrayList<>();
        for (final String profile : profiles) {
            for (final Planned p : plan) {
                if (p.label.startsWith("threads") && !profile.equals(profiles.get(0))) {
                    continue; // (the probe counts threads, the same under either profile)
                }
                perProfile.add(new Planned(p.label + " [" + profile + "]", p.weight, () -> {
                    NodeProcess.profile = profile;
                    p.action.run();
                }));
            }
        }
        return perProfile;
    }

    private void record(StepResult r) {
        r.profile = NodeProcess.profile;
        results.add(r);
        progress.println(ReportConsole.tableRow(r, experimentWidth, transportWidth));
    }

    /**
     * The progress of a run: "step n of N", the time elapsed and an estimate of the time left (from the time the
     * steps done so far took per unit of their estimated cost). On a terminal one line is rewritten in place; when
     * the output is a file or a pipe, each step starts a plain line and nothing is rewritten.
     */
    static final class Progress {
        private final PrintStream out;
        private final boolean terminal;
        private final int total;
        private final double totalWeight;
        private final LongSupplier clock;
        private final long started;
        private int step;
        private double doneWeight;
        private double currentWeight;
        private long doneNanos;
        private String current = "";
        /** Characters of the progress line on the terminal (0: none shown). */
        private int shown;

        Progress(PrintStream out, boolean terminal, int total, double totalWeight) {
            this(out, terminal, total, totalWeight, System::nanoTime);
        }

        Progress(PrintStream out, boolean terminal, int total, double totalWeight, LongSupplier clock) {
            this.out = out;
            this.terminal = terminal;
            this.total = total;
            this.totalWeight = totalWeight;
            this.clock = clock;
            this.started = clock.getAsLong();
        }

        /** A step starts. */
        void begin(String label, double weight) {
            step++;
            currentWeight = weight;
            current = String.format(Locale.ROOT, "step %d of %d (%s): %s", step, total, timeLeft(), label);
            if (terminal) {
                show(current);
            } else {
                out.println(current);
                out.flush();
            }
        }

        /** How the current step is going (e.g. elements arrived); shown on a terminal only. */
        void update(String detail) {
            if (terminal && !current.isEmpty()) {
                show(current + ": " + detail);
            }
        }

        /** The current step is over. */
        void end() {
            doneWeight += currentWeight;
            doneNanos = clock.getAsLong() - started;
            current = "";
        }

        /** A line of output (a result row): on a terminal the progress line is cleared first, then redrawn. */
        void println(String line) {
            clear();
            out.println(line);
            if (terminal && !current.isEmpty()) {
                show(current);
            }
            out.flush();
        }

        /** Takes the progress line off the terminal. */
        void clear() {
            if (terminal && shown > 0) {
                out.print("\r" + spaces(shown) + "\r");
                shown = 0;
                out.flush();
            }
        }

        private void show(String line) {
            out.print("\r" + line + spaces(shown - line.length()));
            shown = Math.max(shown, line.length());
            out.flush();
        }

        String timeLeft() {
            long elapsed = clock.getAsLong() - started;
            String spent = Report.duration(Duration.ofNanos(elapsed)) + " elapsed";
            if (doneWeight <= 0 || doneNanos <= 0) {
                return spent + ", time left not yet known";
            }
            double left = (totalWeight - doneWeight) * doneNanos / doneWeight;
            return spent + ", about " + Report.duration(Duration.ofNanos((long) left)) + " left";
        }

        private static String spaces(int n) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < n; i++) {
                sb.append(' ');
            }
            return sb.toString();
        }
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

    /**
     * The multicast memberships of this machine's namespace before a step's nodes start: each node is checked
     * against them once it is ready ({@link NodeProcess#checkListeners}); {@code null} where {@code /proc} is not
     * readable.
     */
    private static SocketAudit listenersBefore() throws IOException {
        return SocketAudit.available() ? SocketAudit.self() : null;
    }

    List<String> nodeArgs(String role, String transport, int count, int size, String mode) {
        // a -sync variant runs its base transport with synchronous puts
        String m = "async".equals(mode) && Profiles.isSyncVariant(transport) ? "sync" : mode;
        return new ArrayList<>(Arrays.asList("role=" + role, "transport=" + Profiles.base(transport), "count=" + count,
                "size=" + size, "discovery=" + discoveryArg(), "mode=" + m));
    }

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
        int[] arrived = {0};
        NodeProcess reader = null;
        NodeProcess writer = null;
        try {
            SocketAudit before = listenersBefore();
            reader = NodeProcess.start("reader", heap, nodeArgs("reader", transport, count, size, "async"), log);
            String endpoint = reader.expect("READY", deadline, l -> { }).substring(6).trim();
            List<String> wargs = nodeArgs("writer", transport, count, size, "async");
            wargs.add("peer=" + endpoint);
            writer = NodeProcess.start("writer", heap, wargs, log);
            writer.expect("READY", deadline, l -> { }, reader);
            reader.checkListeners(before);
            writer.checkListeners(before);
            // both JVMs warm up on a few thousand elements first; the timed step starts on GO
            reader.expect("WARM", deadline, l -> { }, writer);
            writer.send("GO");
            String[] wrote = writer.expect("WROTE", deadline, l -> { }, reader).split(" ");
            NodeProcess w = writer;
            String[] done = reader.expect("DONE", deadline, l -> {
                if (l.startsWith("PROGRESS")) {
                    arrived[0] = Integer.parseInt(l.substring(9).trim());
                    progress.update(String.format(Locale.ROOT, "%,d of %,d arrived", arrived[0], count));
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
            StepResult result = new StepResult(experiment, transport, count, size, (lastArrival - firstPut) / 1e6,
                    (lastArrival - firstArrival) / 1e6, Long.parseLong(wrote[3]), Long.parseLong(done[5]), Double.NaN,
                    Double.NaN, Double.NaN, outcome, (lastPut - firstPut) / 1e6);
            // what each process spent from the step's start to the last arrival: CPU and heap allocation
            writer.send("COST");
            String[] wc = writer.expect("COST", deadline, l -> { }, reader).split(" ");
            reader.send("COST");
            String[] rc = reader.expect("COST", deadline, l -> { }, w).split(" ");
            result.writerCpuSeconds = Long.parseLong(wc[1]) < 0 ? Double.NaN : Long.parseLong(wc[1]) / 1e9;
            result.readerCpuSeconds = Long.parseLong(rc[1]) < 0 ? Double.NaN : Long.parseLong(rc[1]) / 1e9;
            result.writerAllocBytes = Long.parseLong(wc[2]);
            result.readerAllocBytes = Long.parseLong(rc[2]);
            result.profile = NodeProcess.profile;
            long loopCpu = wrote.length > 6 ? Long.parseLong(wrote[6]) : -1;
            result.putCpuSeconds = loopCpu < 0 ? Double.NaN : loopCpu / 1e9;
            return result;
        } catch (NodeProcess.StepFailure e) {
            return StepResult.failed(experiment, transport, count, size, e.getMessage() + ", reader had "
                    + arrived[0] + " of " + count);
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
            SocketAudit before = listenersBefore();
            int[] ports = new int[nodes];
            StringBuilder portList = new StringBuilder();
            for (int i = 0; i < nodes; i++) {
                ports[i] = ReplayNode.freePort();
                portList.append(i == 0 ? "" : ",").append(ports[i]);
            }
            for (int i = 0; i < nodes; i++) {
                boolean writes = all || i == 0;
                int expect = all ? perMember : i == 0 ? 0 : count;
                members.add(NodeProcess.start("member" + i, e4Heap, GroupMember.class, new ArrayList<>(Arrays.asList(
                        "transport=" + transport, "index=" + i, "ports=" + portList, "count=" + count,
                        "size=" + size, "writes=" + writes, "expect=" + expect)), log));
            }
            for (NodeProcess m : members) {
                m.expect("READY", deadline, l -> { });
            }
            for (NodeProcess m : members) {
                m.checkListeners(before);
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
        String payloads = Arrays.stream(e3Payloads).mapToObj(Integer::toString).reduce((a, b) -> a + "," + b)
                .orElse("0");
        try {
            SocketAudit before = listenersBefore();
            reader = NodeProcess.start("reader", heap, nodeArgs("reader", transport, Integer.MAX_VALUE, 0, "hold"), log);
            String endpoint = reader.expect("READY", deadline, l -> { }).substring(6).trim();
            List<String> wargs = nodeArgs("writer", transport, 0, 0, "latency");
            wargs.add("peer=" + endpoint);
            wargs.add("payloads=" + payloads);
            wargs.add("calls=" + e3Calls);
            writer = NodeProcess.start("writer", heap, wargs, log);
            writer.expect("READY", deadline, l -> { });
            reader.checkListeners(before);
            writer.checkListeners(before);
            for (int ignored : e3Payloads) {
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
