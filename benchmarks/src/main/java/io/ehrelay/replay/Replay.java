package io.ehrelay.replay;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;


/**
 * The two-node replay of EXPERIMENTS.md: E1 (10,000 elements of growing size), E2 (growing count of 1,280 B
 * elements) and E3 (synchronous put latency by payload), between two JVM processes on this machine, for each
 * transport and for a raw TCP loopback stream of the same bytes. Prints a table per step, writes CSV, a
 * Markdown table and an HTML page with charts. Run with {@code --help} for the options.
 */
public final class Replay extends ReplaySteps {

    private final List<StepResult> results = new ArrayList<>();

    /** Wall-clock time of the whole run, for the report. */
    Duration elapsed = Duration.ZERO;
    /** True while writing a report again from {@link #render}. */
    boolean rendered;
    private int experimentWidth = Report.EXPERIMENT_WIDTH;
    private int transportWidth = Report.TRANSPORT_WIDTH;


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
}
