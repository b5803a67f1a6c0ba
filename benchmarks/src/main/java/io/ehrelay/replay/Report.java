package io.ehrelay.replay;

import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

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

    static String stepLabel(StepResult r) {
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

    private static ReportTables.Doc document(List<StepResult> results, List<ThreadsProbe.Row> threads, List<ReportCharts.Chart> charts,
                                Replay run, String svgPrefix) {
        ReportTables.Doc doc = new ReportTables.Doc();
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
                ReportTables.latencyTables(doc, rows);
            } else {
                ReportTables.throughputTables(doc, e, rows);
            }
        }
        ReportCharts.Chart threadsChart = bySlug.remove("threads");
        if (threadsChart != null || !threads.isEmpty()) {
            doc.heading(2, threadsChart != null ? threadsChart.title() : "Threads", "threads");
            chartBlock(doc, threadsChart, svgPrefix);
            doc.table(ReportTables.threadsTable(threads));
        }
        ReportTables.Table all = new ReportTables.Table("All E1, E2 and E4 steps (seconds: " + LOWER + "; MB/s and elements/s: " + HIGHER + ")",
                Arrays.asList("exp", "transport", "count", "size B", "s (first put → last arrival)",
                        "s (first → last arrival)", "MB/s", "elements/s", "writer heap MB", "reader heap MB",
                        "put loop s", "put loop CPU s", "CPU s per GB (both nodes)", "allocated B per B: writer",
                        "reader", "result"),
                0, 1, 15);
        for (StepResult r : results) {
            if (!r.isLatency()) {
                all.row(Arrays.asList(r.experiment, r.transport, String.format(Locale.ROOT, "%,d", r.count),
                        String.format(Locale.ROOT, "%,d", r.size), ReportTables.num3(r.seconds), ReportTables.num3(r.blogSeconds),
                        ReportTables.num1(r.megabytesPerSecond()), Double.isNaN(r.seconds) ? "–"
                                : String.format(Locale.ROOT, "%,.0f", r.elementsPerSecond()),
                        Long.toString(r.writerPeakHeap >> 20), Long.toString(r.readerPeakHeap >> 20),
                        ReportTables.num3(r.putSeconds), ReportTables.num3(r.putCpuSeconds), ReportTables.num1(r.cpuSecondsPerGigabyte()), ReportTables.num1(r.allocPerByte(r.writerAllocBytes)),
                        ReportTables.num1(r.allocPerByte(r.readerAllocBytes)), r.outcome));
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
                ReportTables.Table t = ReportTables.baselineTable(e, baseline, ReportVerdicts.pairs(rowsOf(results, e), baseline));
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

    private static void chartBlock(ReportTables.Doc doc, ReportCharts.Chart c, String svgPrefix) {
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
