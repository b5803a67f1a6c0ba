package io.ehrelay.replay;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Formats replay results: the console rows and summary, CSV, and a report as Markdown and as a self-contained
 * HTML page with SVG charts. The report opens with a verdict per experiment (the fastest ehrelay transport, its
 * ratio to the best stock series and to the raw stream), then one section per experiment (chart, tables), then
 * every step and the detailed ratios. Compiles for Java 8.
 */
final class Report {

    /** How the old JGroups module's "synchronous" mode behaves: it sends and returns, waiting for nobody. */
    static final String NO_WAIT = "does not wait for peers";
    static final String LOWER = "lower is better";
    static final String HIGHER = "higher is better";

    /** Console column widths that fit every known name ({@code E4 n-n/16}, {@code stock-jgroups-udp}). */
    static final int EXPERIMENT_WIDTH = 9;
    static final int TRANSPORT_WIDTH = 17;

    /** Series order in tables and legends: ehrelay, then stock, then raw; within each, the replay's order. */
    static final Comparator<String> SERIES_ORDER = new Comparator<String>() {
        @Override
        public int compare(String a, String b) {
            int c = Integer.compare(kindRank(a), kindRank(b));
            if (c != 0) {
                return c;
            }
            c = Integer.compare(order(a), order(b));
            return c != 0 ? c : a.compareTo(b);
        }

        private int order(String t) {
            int i = Profiles.ALL.indexOf(Profiles.base(t));
            return (i < 0 ? Profiles.ALL.size() : i) * 2 + (Profiles.isSyncVariant(t) ? 1 : 0);
        }
    };

    static final List<String> BASELINES = Arrays.asList(Profiles.RAW, Profiles.STOCK_RMI,
            Profiles.STOCK_RMI_SYNC, Profiles.STOCK_JGROUPS, Profiles.STOCK_JGROUPS_UDP);

    static final Map<String, String> HUES = new HashMap<>();
    static final String[] SPARE_HUES = {"#17becf", "#7f3c8d", "#11a579", "#3969ac", "#e73f74", "#80ba5a"};

    static {
        HUES.put("tcp", "#1f77b4");
        HUES.put("rmi", "#ff7f0e");
        HUES.put("hessian", "#2ca02c");
        HUES.put(Profiles.JGROUPS, "#9467bd");
        HUES.put(Profiles.JGROUPS_UDP, "#d62728");
        HUES.put(Profiles.STOCK_RMI, "#8c564b");
        HUES.put(Profiles.STOCK_JGROUPS, "#e377c2");
        HUES.put(Profiles.STOCK_JGROUPS_UDP, "#bcbd22");
    }

    static final String RAW_COLOR = "#888888";

    private Report() {
    }

    // ---------------------------------------------------------------------------------------------- console

    /** The width of a column holding {@code names}: the longest name, at least {@code min}. */
    static int width(int min, Collection<String> names) {
        int w = min;
        for (String n : names) {
            w = Math.max(w, n.length());
        }
        return w;
    }

    static String tableHeader() {
        return tableHeader(EXPERIMENT_WIDTH, TRANSPORT_WIDTH);
    }

    static String tableHeader(int experimentWidth, int transportWidth) {
        return String.format(Locale.ROOT, "%-" + experimentWidth + "s %-" + transportWidth
                + "s %10s %9s %9s %9s %9s %11s %8s %8s %7s %7s %8s %9s  %s", "exp", "transport", "count", "size B",
                "s(put)", "s(blog)", "MB/s", "elements/s", "heapW MB", "heapR MB", "loop s", "loopCPU", "CPU s/GB",
                "alloc W/R",
                "result");
    }

    static String tableRow(StepResult r) {
        return tableRow(r, Math.max(EXPERIMENT_WIDTH, r.experiment.length()),
                Math.max(TRANSPORT_WIDTH, r.transport.length()));
    }

    static String tableRow(StepResult r, int experimentWidth, int transportWidth) {
        String lead = String.format(Locale.ROOT, "%-" + experimentWidth + "s %-" + transportWidth + "s ", r.experiment,
                r.transport);
        if (r.isLatency()) {
            return lead + String.format(Locale.ROOT, "%10s %,9d  sync put latency: p50 %.1f us, p99 %.1f us, max %.1f us"
                    + " (%d calls)%s  %s", "", r.size, r.p50Micros, r.p99Micros, r.maxMicros, r.count,
                    waitsForPeers(r.transport) ? "" : " (" + NO_WAIT + ")", r.outcome);
        }
        return lead + String.format(Locale.ROOT, "%,10d %,9d %9.3f %9.3f %9.1f %,11.0f %8d %8d %7.3f %7.3f %8.1f %4.1f/%-4.1f  %s",
                r.count, r.size, r.seconds, r.blogSeconds, r.megabytesPerSecond(), r.elementsPerSecond(),
                r.writerPeakHeap >> 20, r.readerPeakHeap >> 20, r.putSeconds, r.putCpuSeconds, r.cpuSecondsPerGigabyte(),
                r.allocPerByte(r.writerAllocBytes), r.allocPerByte(r.readerAllocBytes), r.outcome);
    }

    /**
     * What the console prints at the end of a run: the verdict, the failed steps' count, where the report is.
     * The detailed ratios are in the report files only.
     */
    static List<String> consoleSummary(List<StepResult> results, Duration elapsed, Path html, Path md, Path csv,
                                       int charts, Path log) {
        List<String> lines = new ArrayList<>();
        lines.add("verdict (ratios are same-run; the report has every step):");
        for (ReportVerdicts.Verdict v : ReportVerdicts.verdicts(results)) {
            lines.add("  " + v.text);
        }
        if (lines.size() == 1) {
            lines.add("  (no experiment with results)");
        }
        int failed = 0;
        for (StepResult r : results) {
            if (!r.ok()) {
                failed++;
            }
        }
        if (failed > 0) {
            lines.add(String.format(Locale.ROOT, "%d step(s) FAILED; reasons in the report", failed));
        }
        lines.add("run took " + duration(elapsed));
        lines.add("report: " + html + " (also " + md.getFileName() + ", " + csv.getFileName() + ", " + charts
                + " .svg chart(s)" + (log == null ? "" : "; node logs " + log.getFileName()) + ")");
        return lines;
    }

    static void writeCsv(List<StepResult> results, Path file) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add(StepResult.CSV_HEADER);
        for (StepResult r : results) {
            lines.add(r.csv());
        }
        Files.write(file, lines);
    }

    // -------------------------------------------------------------------------------------- classification

    /** Whether a transport's synchronous mode waits for the peer (the old JGroups module's sends and returns). */
    static boolean waitsForPeers(String transport) {
        return !Profiles.isStockJGroups(Profiles.base(transport));
    }

    static boolean isEhrelay(String transport) {
        return Profiles.isEhrelay(Profiles.base(transport));
    }

    static boolean isStock(String transport) {
        return Profiles.isStock(Profiles.base(transport)) || transport.startsWith("stock-");
    }

    static boolean isRaw(String transport) {
        return Profiles.RAW.equals(transport);
    }

    private static int kindRank(String t) {
        return isEhrelay(t) ? 0 : isStock(t) ? 1 : isRaw(t) ? 2 : 0;
    }

    static List<String> transportsOf(List<StepResult> rows) {
        Set<String> set = new LinkedHashSet<>();
        for (StepResult r : rows) {
            set.add(r.transport);
        }
        List<String> out = new ArrayList<>(set);
        Collections.sort(out, SERIES_ORDER);
        return out;
    }

    static List<String> experimentsOf(List<StepResult> results) {
        Set<String> set = new LinkedHashSet<>();
        for (StepResult r : results) {
            set.add(r.experiment);
        }
        return new ArrayList<>(set);
    }

    static List<StepResult> rowsOf(List<StepResult> results, String experiment) {
        List<StepResult> out = new ArrayList<>();
        for (StepResult r : results) {
            if (experiment.equals(r.experiment)) {
                out.add(r);
            }
        }
        return out;
    }

    /** The steps of a transfer experiment, in run order: "count x size" keys. */
    static List<String> stepsOf(List<StepResult> rows) {
        Set<String> set = new LinkedHashSet<>();
        for (StepResult r : rows) {
            set.add(r.stepKey());
        }
        return new ArrayList<>(set);
    }

    /** transport → step key → result (the last one wins). */
    static Map<String, Map<String, StepResult>> byTransportAndStep(List<StepResult> rows) {
        Map<String, Map<String, StepResult>> out = new LinkedHashMap<>();
        for (StepResult r : rows) {
            Map<String, StepResult> m = out.get(r.transport);
            if (m == null) {
                m = new LinkedHashMap<>();
                out.put(r.transport, m);
            }
            m.put(r.stepKey(), r);
        }
        return out;
    }

    static String describe(String experiment) {
        if ("E1".equals(experiment)) {
            return "E1 growing element size";
        }
        if ("E2".equals(experiment)) {
            return "E2 growing element count";
        }
        if ("E3".equals(experiment)) {
            return "E3 synchronous put latency";
        }
        if (experiment.startsWith("E4 ")) {
            String[] mn = experiment.substring(3).split("/");
            if (mn.length == 2) {
                return experiment + " (" + mn[1] + " members, " + ("1-n".equals(mn[0]) ? "one writes"
                        : "all write") + ")";
            }
        }
        return experiment;
    }

    static String duration(Duration d) {
        long s = d.getSeconds();
        return String.format(Locale.ROOT, "%d min %02d s", s / 60, s % 60);
    }

    private static String machine() {
        return String.format(Locale.ROOT, "%d cores, %s %s, JVM %s %s, %s", Runtime.getRuntime().availableProcessors(),
                System.getProperty("os.name"), System.getProperty("os.arch"), System.getProperty("java.vm.name"),
                System.getProperty("java.version"), ManagementFactory.getRuntimeMXBean().getVmVendor());
    }

    // --------------------------------------------------------------------------------------------- document

    /** A table rendered both as Markdown and as HTML; its caption says which way is better. */
    static final class Table {
        final String caption;
        final List<String> headers;
        final List<List<String>> rows = new ArrayList<>();
        /** Columns of text (left-aligned); the others are numbers (right-aligned). */
        final Set<Integer> textColumns = new TreeSet<>();

        Table(String caption, List<String> headers, Integer... textColumns) {
            this.caption = caption;
            this.headers = headers;
            this.textColumns.addAll(Arrays.asList(textColumns));
        }

        Table row(List<String> cells) {
            rows.add(cells);
            return this;
        }
    }

    /** Markdown and HTML written side by side. */
    private static final class Doc {
        final StringBuilder md = new StringBuilder();
        final StringBuilder html = new StringBuilder();

        void heading(int level, String text, String id) {
            md.append(md.length() == 0 || md.toString().endsWith("\n\n") ? "" : "\n").append(repeat('#', level))
                    .append(' ').append(text).append("\n\n");
            html.append("<h").append(level).append('>')
                    .append(escape(text)).append("</h").append(level).append('>');
        }

        void para(String text, String cssClass) {
            md.append(text).append("\n\n");
            html.append("<p").append(cssClass == null ? "" : " class=\"" + cssClass + "\"").append('>')
                    .append(escape(text)).append("</p>");
        }

        void bullets(List<String> items, String cssClass) {
            if (items.isEmpty()) {
                return;
            }
            html.append("<ul").append(cssClass == null ? "" : " class=\"" + cssClass + "\"").append('>');
            for (String i : items) {
                md.append("- ").append(i).append('\n');
                html.append("<li>").append(escape(i)).append("</li>");
            }
            md.append('\n');
            html.append("</ul>");
        }

        void table(Table t) {
            if (t.rows.isEmpty()) {
                return;
            }
            md.append(t.caption).append(":\n\n|");
            html.append("<table><caption>").append(escape(t.caption)).append("</caption><thead><tr>");
            StringBuilder rule = new StringBuilder("|");
            for (int c = 0; c < t.headers.size(); c++) {
                md.append(' ').append(mdCell(t.headers.get(c))).append(" |");
                rule.append(t.textColumns.contains(c) ? "---|" : "---:|");
                html.append("<th>").append(escape(t.headers.get(c))).append("</th>");
            }
            md.append('\n').append(rule).append('\n');
            html.append("</tr></thead><tbody>");
            for (List<String> row : t.rows) {
                md.append('|');
                html.append("<tr>");
                for (int c = 0; c < row.size(); c++) {
                    String cell = row.get(c);
                    md.append(' ').append(mdCell(cell)).append(" |");
                    String cls = (t.textColumns.contains(c) ? "t" : "")
                            + (cell.startsWith("FAIL") || cell.startsWith("NO") ? (t.textColumns.contains(c) ? " " : "")
                            + "fail" : "");
                    html.append(cls.isEmpty() ? "<td>" : "<td class=\"" + cls + "\">").append(escape(cell))
                            .append("</td>");
                }
                md.append('\n');
                html.append("</tr>");
            }
            md.append('\n');
            html.append("</tbody></table>");
        }
    }

    private static String mdCell(String s) {
        return s.replace("|", "\\|").replace('\n', ' ');
    }

    private static String repeat(char c, int n) {
        char[] a = new char[Math.max(0, n)];
        Arrays.fill(a, c);
        return new String(a);
    }

    private static String stepLabel(StepResult r) {
        return String.format(Locale.ROOT, "%,d × %,d B", r.count, r.size);
    }

    static String slug(String experiment) {
        return experiment.toLowerCase(Locale.ROOT).replace(' ', '-').replace('/', '-');
    }

    static String markdown(List<StepResult> results, Replay run) {
        return document(results, Collections.<ThreadsProbe.Row>emptyList(), ReportCharts.charts(results,
                Collections.<ThreadsProbe.Row>emptyList()), run, null).md.toString();
    }

    /** The Markdown report; with {@code svgPrefix}, each chart is linked as {@code <svgPrefix><slug>.svg}. */
    static String markdown(List<StepResult> results, List<ThreadsProbe.Row> threads, Replay run, String svgPrefix) {
        return document(results, threads, ReportCharts.charts(results, threads), run, svgPrefix).md.toString();
    }

    static String html(List<StepResult> results, List<ThreadsProbe.Row> threads, Replay run) {
        return html(results, threads, ReportCharts.charts(results, threads), run);
    }

    /** The report page with {@code charts} already drawn (the replay also writes each as an SVG file). */
    static String html(List<StepResult> results, List<ThreadsProbe.Row> threads, List<ReportCharts.Chart> charts, Replay run) {
        StringBuilder sb = new StringBuilder();
        sb.append("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ehrelay replay</title><style>")
                .append("body{font-family:sans-serif;margin:2em;max-width:1200px}table{border-collapse:collapse;")
                .append("margin:0.5em 0 1.5em}caption{text-align:left;padding:4px 0;color:#333}")
                .append("td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#eee}")
                .append("td.t{text-align:left}.fail{color:#b00}ul.verdict li{margin:0.4em 0}")
                .append("svg{border:1px solid #ddd;margin:1em 0}</style></head><body>");
        sb.append(document(results, threads, charts, run, null).html);
        sb.append("</body></html>");
        return sb.toString();
    }

    private static Doc document(List<StepResult> results, List<ThreadsProbe.Row> threads, List<ReportCharts.Chart> charts,
                                Replay run, String svgPrefix) {
        Doc doc = new Doc();
        doc.heading(1, "ehrelay replay", null);
        if (run.rendered) {
            doc.para("Re-rendered on " + LocalDateTime.now().withNano(0) + " from " + run.render.getFileName()
                    + " (the run's machine, heap and duration are in that run's own report).", null);
        } else {
            doc.para(LocalDateTime.now().withNano(0) + " on " + machine() + ", heap " + run.heap + " per node (E4 "
                    + "members " + run.e4Heap + "), " + run.reps + " rep(s), run took " + duration(run.elapsed) + ".",
                    null);
        }
        String profile = results.isEmpty() ? NodeProcess.TUNED : results.get(0).profile;
        doc.para("Profile **" + profile + "**: " + (NodeProcess.DEFAULT.equals(profile)
                ? "what users run — each node gets -Xmx only, and ehrelay's provider its default properties (the "
                + "transport, addresses and discovery only)."
                : "each node gets -Xms = -Xmx and -XX:+AlwaysPreTouch, and ehrelay's writer a queue that waits for "
                + "room (overflowPolicy=block, overflowBlockMillis=600000, queueMaxBytes=8m).")
                + " Stock and raw series run in the same JVMs of the same profile.", null);
        List<ReportVerdicts.Verdict> verdicts = ReportVerdicts.verdicts(results);
        if (!verdicts.isEmpty()) {
            doc.heading(2, "Verdict", "verdict");
            List<String> lines = new ArrayList<>();
            for (ReportVerdicts.Verdict v : verdicts) {
                lines.add(v.text);
            }
            doc.bullets(lines, "verdict");
            doc.para("Ratios compare series measured in the same run on the same machine; the best stock series is "
                    + "the fastest stock one at each step (synchronous ehrelay runs are compared with synchronous stock "
                    + "runs only). One run per step on a shared machine is noisy: use --reps 3 for medians.", null);
        }
        Map<String, ReportCharts.Chart> bySlug = new HashMap<>();
        for (ReportCharts.Chart c : charts) {
            bySlug.put(c.slug(), c);
        }
        for (String e : experimentsOf(results)) {
            List<StepResult> rows = rowsOf(results, e);
            ReportCharts.Chart c = bySlug.remove(slug(e));
            doc.heading(2, c != null ? c.title() : describe(e), slug(e));
            chartBlock(doc, c, svgPrefix);
            if ("E3".equals(e)) {
                latencyTables(doc, rows);
            } else {
                throughputTables(doc, e, rows);
            }
        }
        ReportCharts.Chart threadsChart = bySlug.remove("threads");
        if (threadsChart != null || !threads.isEmpty()) {
            doc.heading(2, threadsChart != null ? threadsChart.title() : "Threads", "threads");
            chartBlock(doc, threadsChart, svgPrefix);
            doc.table(threadsTable(threads));
        }
        Table all = new Table("All E1, E2 and E4 steps (seconds: " + LOWER + "; MB/s and elements/s: " + HIGHER + ")",
                Arrays.asList("exp", "transport", "count", "size B", "s (first put → last arrival)",
                        "s (first → last arrival)", "MB/s", "elements/s", "writer heap MB", "reader heap MB",
                        "put loop s", "put loop CPU s", "CPU s per GB (both nodes)", "allocated B per B: writer",
                        "reader", "result"),
                0, 1, 15);
        for (StepResult r : results) {
            if (!r.isLatency()) {
                all.row(Arrays.asList(r.experiment, r.transport, String.format(Locale.ROOT, "%,d", r.count),
                        String.format(Locale.ROOT, "%,d", r.size), num3(r.seconds), num3(r.blogSeconds),
                        num1(r.megabytesPerSecond()), Double.isNaN(r.seconds) ? "–"
                                : String.format(Locale.ROOT, "%,.0f", r.elementsPerSecond()),
                        Long.toString(r.writerPeakHeap >> 20), Long.toString(r.readerPeakHeap >> 20),
                        num3(r.putSeconds), num3(r.putCpuSeconds), num1(r.cpuSecondsPerGigabyte()), num1(r.allocPerByte(r.writerAllocBytes)),
                        num1(r.allocPerByte(r.readerAllocBytes)), r.outcome));
            }
        }
        if (!all.rows.isEmpty()) {
            doc.heading(2, "All steps", "all-steps");
            doc.table(all);
        }
        boolean headed = false;
        for (String e : experimentsOf(results)) {
            if ("E3".equals(e)) {
                continue;
            }
            for (String baseline : BASELINES.subList(1, BASELINES.size())) { // raw: in the experiment's section
                Table t = baselineTable(e, baseline, ReportVerdicts.pairs(rowsOf(results, e), baseline));
                if (t != null) {
                    if (!headed) {
                        doc.heading(2, "Ratios to each baseline", "ratios");
                        headed = true;
                    }
                    doc.table(t);
                }
            }
        }
        return doc;
    }

    private static void chartBlock(Doc doc, ReportCharts.Chart c, String svgPrefix) {
        if (c == null) {
            return;
        }
        if (!c.svg().isEmpty()) {
            doc.html.append(c.svg());
            if (svgPrefix != null) {
                doc.md.append("![").append(c.title()).append("](").append(svgPrefix).append(c.slug())
                        .append(".svg)\n\n");
            }
        }
        doc.html.append(c.failures());
        for (String f : c.failureLines()) {
            doc.md.append("- ").append(f).append('\n');
        }
        if (!c.failureLines().isEmpty()) {
            doc.md.append('\n');
        }
    }

    private static void throughputTables(Doc doc, String experiment, List<StepResult> rows) {
        List<String> transports = transportsOf(rows);
        List<String> steps = stepsOf(rows);
        Map<String, Map<String, StepResult>> by = byTransportAndStep(rows);
        Map<String, String> labels = new LinkedHashMap<>();
        for (StepResult r : rows) {
            labels.put(r.stepKey(), stepLabel(r));
        }
        List<String> headers = new ArrayList<>();
        headers.add("step");
        headers.addAll(transports);
        Table mbs = new Table(experiment + ": MB/s from the first put to the last arrival (" + HIGHER + ")", headers,
                0);
        for (String step : steps) {
            List<String> cells = new ArrayList<>();
            cells.add(labels.get(step));
            for (String t : transports) {
                StepResult r = by.get(t).get(step);
                cells.add(r == null ? "–" : r.ok() ? num1(r.megabytesPerSecond()) : "FAIL");
            }
            mbs.row(cells);
        }
        doc.table(mbs);

        List<String> ehrelay = new ArrayList<>();
        List<String> stockAsync = new ArrayList<>();
        List<String> stockSync = new ArrayList<>();
        for (String t : transports) {
            if (isEhrelay(t)) {
                ehrelay.add(t);
            } else if (isStock(t)) {
                (Profiles.isSyncVariant(t) ? stockSync : stockAsync).add(t);
            }
        }
        if (ehrelay.isEmpty()) {
            return;
        }
        boolean anySync = false;
        boolean anyAsync = false;
        for (String t : ehrelay) {
            anySync |= Profiles.isSyncVariant(t);
            anyAsync |= !Profiles.isSyncVariant(t);
        }
        List<String> rh = new ArrayList<>();
        rh.add("step");
        if (anyAsync && !stockAsync.isEmpty()) {
            rh.add("best stock");
        }
        if (anySync && !stockSync.isEmpty()) {
            rh.add("best stock, sync");
        }
        int textCols = rh.size();
        rh.addAll(ehrelay);
        Table vsStock = new Table(experiment + ": ehrelay throughput ÷ the best stock series at each step ("
                + HIGHER + "; synchronous runs ÷ synchronous stock)", rh, textCols == 3 ? new Integer[] {0, 1, 2}
                : textCols == 2 ? new Integer[] {0, 1} : new Integer[] {0});
        boolean anyStock = false;
        for (String step : steps) {
            List<String> cells = new ArrayList<>();
            cells.add(labels.get(step));
            StepResult bestAsync = ReportVerdicts.fastest(by, stockAsync, step);
            StepResult bestSync = ReportVerdicts.fastest(by, stockSync, step);
            if (anyAsync && !stockAsync.isEmpty()) {
                cells.add(bestAsync == null ? "–" : bestAsync.transport);
            }
            if (anySync && !stockSync.isEmpty()) {
                cells.add(bestSync == null ? "–" : bestSync.transport);
            }
            for (String t : ehrelay) {
                StepResult r = by.get(t).get(step);
                StepResult s = Profiles.isSyncVariant(t) ? bestSync : bestAsync;
                if (r != null && r.ok() && s != null) {
                    anyStock = true;
                    cells.add(ReportVerdicts.ratio(s.seconds / r.seconds));
                } else {
                    cells.add(r != null && !r.ok() ? "FAIL" : "–");
                }
            }
            vsStock.row(cells);
        }
        if (anyStock) {
            doc.table(vsStock);
        }
        Map<String, StepResult> raw = by.get(Profiles.RAW);
        if (raw != null) {
            List<String> h = new ArrayList<>();
            h.add("step");
            h.addAll(ehrelay);
            Table vsRaw = new Table(experiment + ": ehrelay throughput as a share of the raw TCP stream (" + HIGHER
                    + ")", h, 0);
            for (String step : steps) {
                List<String> cells = new ArrayList<>();
                cells.add(labels.get(step));
                StepResult rr = raw.get(step);
                for (String t : ehrelay) {
                    StepResult r = by.get(t).get(step);
                    cells.add(r != null && r.ok() && rr != null && rr.ok() ? ReportVerdicts.percent(rr.seconds / r.seconds)
                            : r != null && !r.ok() ? "FAIL" : "–");
                }
                vsRaw.row(cells);
            }
            doc.table(vsRaw);
        }
    }

    private static Table baselineTable(String experiment, String baseline, List<StepResult[]> pairs) {
        if (pairs.isEmpty()) {
            return null;
        }
        List<String> transports = new ArrayList<>();
        Map<String, String> labels = new LinkedHashMap<>();
        Map<String, String> cells = new HashMap<>();
        for (StepResult[] p : pairs) {
            if (!transports.contains(p[0].transport)) {
                transports.add(p[0].transport);
            }
            labels.put(p[0].stepKey(), stepLabel(p[0]));
            double v = p[1].seconds / p[0].seconds;
            cells.put(p[0].stepKey() + "|" + p[0].transport, Profiles.RAW.equals(baseline) ? ReportVerdicts.percent(v) : ReportVerdicts.ratio(v));
        }
        Collections.sort(transports, SERIES_ORDER);
        List<String> headers = new ArrayList<>();
        headers.add("step");
        headers.add(baseline + " MB/s");
        for (String t : transports) {
            headers.add(t + (Profiles.RAW.equals(baseline) ? " % of " : " ÷ ") + baseline);
        }
        Table t = new Table(experiment + ": throughput relative to " + ReportVerdicts.baselineName(baseline) + " (" + HIGHER + ")",
                headers, 0);
        Map<String, String> baseMbs = new HashMap<>();
        for (StepResult[] p : pairs) {
            baseMbs.put(p[0].stepKey(), num1(p[1].megabytesPerSecond()));
        }
        for (Map.Entry<String, String> step : labels.entrySet()) {
            List<String> row = new ArrayList<>();
            row.add(step.getValue());
            row.add(baseMbs.get(step.getKey()));
            for (String tr : transports) {
                String c = cells.get(step.getKey() + "|" + tr);
                row.add(c == null ? "–" : c);
            }
            t.row(row);
        }
        return t;
    }

    static String withNote(String transport) {
        return waitsForPeers(transport) ? transport : transport + " (" + NO_WAIT + ")";
    }

    private static void latencyTables(Doc doc, List<StepResult> rows) {
        List<String> transports = transportsOf(rows);
        Map<String, Map<String, StepResult>> by = byTransportAndStep(rows);
        Set<Integer> payloads = new TreeSet<>();
        for (StepResult r : rows) {
            if (r.ok()) {
                payloads.add(r.size);
            }
        }
        boolean anyNoWait = false;
        List<String> headers = new ArrayList<>();
        headers.add("payload B");
        for (String t : transports) {
            headers.add(withNote(t));
            anyNoWait |= !waitsForPeers(t);
        }
        Table pivot = new Table("E3: synchronous put latency, p50 / p99 in µs, by payload (" + LOWER + ")", headers);
        for (int p : payloads) {
            List<String> cells = new ArrayList<>();
            cells.add(String.format(Locale.ROOT, "%,d", p));
            for (String t : transports) {
                StepResult r = null;
                for (StepResult s : by.get(t).values()) {
                    if (s.ok() && s.size == p) {
                        r = s;
                    }
                }
                cells.add(r == null ? (ReportVerdicts.okSteps(by.get(t)) < by.get(t).size() ? "FAIL" : "–")
                        : String.format(Locale.ROOT, "%,.0f / %,.0f", r.p50Micros, r.p99Micros));
            }
            pivot.row(cells);
        }
        doc.table(pivot);
        if (anyNoWait) {
            doc.para("Marked \"" + NO_WAIT + "\": that transport's \"synchronous\" mode sends and returns without "
                    + "waiting for any peer (the old ehcache-jgroupsreplication module), so its figures are a local "
                    + "send, not a replicated put; it is left out of the verdict.", null);
        }
        Table all = new Table("E3: every payload, latency in µs (" + LOWER + ")", Arrays.asList("transport",
                "payload B", "calls", "p50 µs", "p99 µs", "max µs", "result"), 0, 6);
        for (StepResult r : rows) {
            all.row(Arrays.asList(withNote(r.transport), String.format(Locale.ROOT, "%,d", r.size),
                    String.format(Locale.ROOT, "%,d", r.count), num1(r.p50Micros), num1(r.p99Micros),
                    num1(r.maxMicros), r.outcome));
        }
        doc.table(all);
    }

    private static Table threadsTable(List<ThreadsProbe.Row> threads) {
        String[] header = ThreadsProbe.Row.HEADER.split("\n")[0].split("\\|");
        List<String> headers = new ArrayList<>();
        for (int i = 1; i < header.length; i++) {
            headers.add(header[i].trim());
        }
        Table t = new Table("Threads-per-region probe: threads a pair of nodes adds (" + LOWER + ")", headers, 0,
                headers.size() - 1);
        for (ThreadsProbe.Row r : threads) {
            String[] cells = r.markdown().split("\\|");
            List<String> row = new ArrayList<>();
            for (int i = 1; i < cells.length; i++) {
                row.add(cells[i].trim());
            }
            t.row(row);
        }
        return t;
    }

    private static String num1(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%,.1f", v);
    }

    private static String num3(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%,.3f", v);
    }

    /** A number for a tick: 3 significant digits, k and M for thousands and millions. */
    static String number(double v) {
        if (v >= 1e6) {
            return sig(v / 1e6) + "M";
        }
        if (v >= 1e4) {
            return sig(v / 1e3) + "k";
        }
        if (v >= 1000) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        return sig(v);
    }

    /** A byte count: 0, 1 KiB, 1.25 KiB, 320 KiB, 1 MiB. */
    static String bytes(double v) {
        if (v >= 1 << 20) {
            return sig(v / (1 << 20)) + " MiB";
        }
        if (v >= 1024) {
            return sig(v / 1024) + " KiB";
        }
        return sig(v) + " B";
    }

    private static String sig(double v) {
        if (v == 0) {
            return "0";
        }
        return new BigDecimal(v).round(new MathContext(3)).stripTrailingZeros().toPlainString();
    }

    static String plain(double v) {
        return new BigDecimal(v).round(new MathContext(6)).stripTrailingZeros().toPlainString();
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
