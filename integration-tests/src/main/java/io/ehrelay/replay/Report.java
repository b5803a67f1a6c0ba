package io.ehrelay.replay;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/** Formats replay results: console table, CSV, Markdown, and a self-contained HTML page with SVG charts. */
final class Report {

    private Report() {
    }

    static String tableHeader() {
        return String.format(Locale.ROOT, "%-8s %-14s %10s %9s %9s %9s %9s %11s %8s %8s  %s", "exp", "transp", "count",
                "size B", "s(put)", "s(blog)", "MB/s", "elements/s", "heapW MB", "heapR MB", "result");
    }

    static String tableRow(StepResult r) {
        if ("E3".equals(r.experiment)) {
            return String.format(Locale.ROOT, "%-8s %-14s %10s %9d  sync put latency: p50 %.1f us, p99 %.1f us, max %.1f us"
                    + " (%d calls)  %s", r.experiment, r.transport, "", r.size, r.p50Micros, r.p99Micros, r.maxMicros,
                    r.count, r.outcome);
        }
        return String.format(Locale.ROOT, "%-8s %-14s %,10d %,9d %9.3f %9.3f %9.1f %,11.0f %8d %8d  %s", r.experiment,
                r.transport, r.count, r.size, r.seconds, r.blogSeconds, r.megabytesPerSecond(), r.elementsPerSecond(),
                r.writerPeakHeap >> 20, r.readerPeakHeap >> 20, r.outcome);
    }

    static void writeCsv(List<StepResult> results, Path file) throws IOException {
        List<String> lines = new ArrayList<>();
        lines.add(StepResult.CSV_HEADER);
        for (StepResult r : results) {
            lines.add(r.csv());
        }
        Files.write(file, lines);
    }

    /**
     * Throughput of each ehrelay transport step by step, relative to the raw stream (the physical reference) and
     * to stock Ehcache RMI (what users run today), both measured in the same run.
     */
    static String ratios(List<StepResult> results) {
        StringBuilder sb = new StringBuilder();
        for (String baseline : List.of(Profiles.RAW, Profiles.STOCK_RMI, Profiles.STOCK_RMI_SYNC, Profiles.STOCK_JGROUPS,
                Profiles.STOCK_JGROUPS_UDP)) {
            // synchronous variants are compared with the synchronous baseline only, and asynchronous with the others
            boolean syncBaseline = Profiles.isSyncVariant(baseline);
            StringBuilder lines = new StringBuilder();
            for (StepResult r : results) {
                if (!r.ok() || !Profiles.isEhrelay(Profiles.base(r.transport)) || !isTransfer(r)
                        || Profiles.isSyncVariant(r.transport) != syncBaseline) {
                    continue;
                }
                for (StepResult b : results) {
                    if (b.ok() && baseline.equals(b.transport) && b.experiment.equals(r.experiment)
                            && b.count == r.count && b.size == r.size) {
                        lines.append(String.format(Locale.ROOT, "  %s %,d x %,d B: %s %.1f MB/s, %s %.1f MB/s -> %s%n",
                                r.experiment, r.count, r.size, r.transport, r.megabytesPerSecond(), baseline,
                                b.megabytesPerSecond(), Profiles.RAW.equals(baseline)
                                        ? String.format(Locale.ROOT, "%.0f%%", 100 * b.seconds / r.seconds)
                                        : String.format(Locale.ROOT, "%.1fx", b.seconds / r.seconds)));
                    }
                }
            }
            if (lines.length() > 0) {
                sb.append("throughput relative to ").append(Profiles.RAW.equals(baseline) ? "the raw TCP stream"
                        : Profiles.STOCK_RMI.equals(baseline) ? "stock Ehcache RMI"
                        : Profiles.STOCK_RMI_SYNC.equals(baseline) ? "stock Ehcache RMI, synchronous"
                        : "ehcache-jgroupsreplication 1.7 (" + baseline + ")").append(", same run:\n").append(lines);
            }
        }
        return sb.toString();
    }

    /** E1, E2 and E4 steps move data (throughput); E3 measures latency. */
    private static boolean isTransfer(StepResult r) {
        return !"E3".equals(r.experiment);
    }

    static String duration(Duration d) {
        return String.format(Locale.ROOT, "%d min %02d s", d.toMinutes(), d.toSecondsPart());
    }

    private static String machine() {
        return String.format(Locale.ROOT, "%d cores, %s %s, JVM %s %s, %s", Runtime.getRuntime().availableProcessors(),
                System.getProperty("os.name"), System.getProperty("os.arch"), System.getProperty("java.vm.name"),
                System.getProperty("java.version"), ManagementFactory.getRuntimeMXBean().getVmVendor());
    }

    static String markdown(List<StepResult> results, Replay run) {
        StringBuilder sb = new StringBuilder();
        sb.append("Replay of ").append(LocalDateTime.now().withNano(0)).append(" on ").append(machine())
                .append(", heap ").append(run.heap).append(" per node (E4 members ").append(run.e4Heap).append("), ")
                .append(run.reps).append(" rep(s), run took ").append(duration(run.elapsed)).append("\n\n");
        sb.append("| exp | transport | count | size B | s (first put → last arrival) | s (first → last arrival) | MB/s "
                + "| elements/s | writer heap MB | reader heap MB | result |\n");
        sb.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (StepResult r : results) {
            if ("E3".equals(r.experiment)) {
                continue;
            }
            sb.append(String.format(Locale.ROOT, "| %s | %s | %,d | %,d | %.3f | %.3f | %.1f | %,.0f | %d | %d | %s |%n",
                    r.experiment, r.transport, r.count, r.size, r.seconds, r.blogSeconds, r.megabytesPerSecond(),
                    r.elementsPerSecond(), r.writerPeakHeap >> 20, r.readerPeakHeap >> 20, r.outcome));
        }
        boolean e3 = results.stream().anyMatch(r -> "E3".equals(r.experiment));
        if (e3) {
            sb.append("\n| E3 transport | payload B | calls | p50 µs | p99 µs | max µs | result |\n");
            sb.append("|---|---:|---:|---:|---:|---:|---|\n");
            for (StepResult r : results) {
                if ("E3".equals(r.experiment)) {
                    sb.append(String.format(Locale.ROOT, "| %s | %,d | %,d | %.1f | %.1f | %.1f | %s |%n", r.transport,
                            r.size, r.count, r.p50Micros, r.p99Micros, r.maxMicros, r.outcome));
                }
            }
        }
        String ratios = ratios(results);
        if (!ratios.isEmpty()) {
            sb.append("\n```\n").append(ratios).append("```\n");
        }
        return sb.toString();
    }

    static String html(List<StepResult> results, List<ThreadsProbe.Row> threads, Replay run) {
        return html(results, threads, charts(results, threads), run);
    }

    /** The report page with {@code charts} already drawn (the replay also writes each as an SVG file). */
    static String html(List<StepResult> results, List<ThreadsProbe.Row> threads, List<Chart> charts, Replay run) {
        StringBuilder sb = new StringBuilder();
        sb.append("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>ehrelay replay</title><style>")
                .append("body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse}")
                .append("td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}th{background:#eee}")
                .append(".fail{color:#b00}svg{border:1px solid #ddd;margin:1em 0}</style></head><body>");
        sb.append("<h1>ehrelay replay</h1><p>").append(escape(LocalDateTime.now().withNano(0) + " on "
                + machine() + ", heap " + run.heap + " per node (E4 members " + run.e4Heap + "), " + run.reps
                + " rep(s), run took " + duration(run.elapsed))).append("</p>");
        for (Chart c : charts) {
            sb.append("<h2>").append(escape(c.title())).append("</h2>").append(c.svg()).append(c.failures());
        }
        sb.append("<h2>Table</h2><pre>").append(escape(markdown(results, run)));
        if (!threads.isEmpty()) {
            sb.append("\n").append(escape(ThreadsProbe.Row.HEADER)).append('\n');
            for (ThreadsProbe.Row t : threads) {
                sb.append(escape(t.markdown())).append('\n');
            }
        }
        sb.append("</pre></body></html>");
        return sb.toString();
    }

    /** One chart of the report: a file-name slug, its title, the standalone SVG, the failed steps below it. */
    record Chart(String slug, String title, String svg, String failures) {

        /** The SVG as a file of its own: the title drawn at its top. */
        String standalone() {
            int at = svg.indexOf("/>", svg.indexOf("<rect ")) + 2;
            return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    + svg.substring(0, at).replaceFirst("<svg ", "<svg font-family=\"sans-serif\" ")
                    + "<text x=\"20\" y=\"22\" font-size=\"14\">" + escape(title)
                    + "</text>" + svg.substring(at) + "\n";
        }
    }

    /** Every chart with data, in report order (the HTML embeds them; the replay also writes each as an SVG file). */
    static List<Chart> charts(List<StepResult> results, List<ThreadsProbe.Row> threads) {
        List<Chart> out = new ArrayList<>();
        add(out, "e1", "E1: 10,000 elements of growing size", chart("element size (bytes)",
                "seconds, first put → last arrival", select(results, "E1"), r -> r.transport, r -> r.size,
                r -> r.seconds), failures(results, "E1"));
        add(out, "e2", "E2: growing count of 1,280-byte elements", chart("elements", "seconds, first put → last arrival",
                select(results, "E2"), r -> r.transport, r -> r.count, r -> r.seconds), failures(results, "E2"));
        add(out, "e3", "E3: synchronous put latency by payload (p99)", chart("payload (bytes, +1)", "p99 microseconds",
                select(results, "E3"), r -> r.transport, r -> r.size + 1, r -> r.p99Micros), failures(results, "E3"));
        for (String e4 : results.stream().map(r -> r.experiment).filter(e -> e.startsWith("E4")).distinct().toList()) {
            add(out, "e4-" + e4.substring(3).replace('/', '-'), e4
                    + " (mode/members): elements/s received per member (median member)", chart("element size (bytes)",
                    "elements/s per member", select(results, e4), r -> r.transport, r -> r.size,
                    StepResult::elementsPerSecond), failures(results, e4));
        }
        List<ThreadsProbe.Row> probed = threads.stream().filter(t -> t.notProbed() == null).toList();
        StringBuilder threadFailures = new StringBuilder();
        for (ThreadsProbe.Row t : threads) {
            if (t.notProbed() != null || !t.allReplicated()) {
                threadFailures.append("<p class=\"fail\">").append(escape(t.transport() + ": " + (t.notProbed() != null
                        ? "not probed: " + t.notProbed() : "FAIL at " + t.caches() + " caches (not all replicated)")))
                        .append("</p>");
            }
        }
        add(out, "threads", "Threads: JVM threads a pair of nodes adds, by replicated caches", chart("replicated caches",
                "threads added", probed, ThreadsProbe.Row::transport, ThreadsProbe.Row::caches,
                t -> Math.max(1, t.added())), threadFailures.toString());
        return out;
    }

    private static void add(List<Chart> out, String slug, String title, String svg, String failures) {
        if (!svg.isEmpty() || !failures.isEmpty()) {
            out.add(new Chart(slug, title, svg, failures));
        }
    }

    /** The failed steps of an experiment, with their reasons, below its chart (a chart shows only what ran). */
    private static String failures(List<StepResult> results, String experiment) {
        StringBuilder sb = new StringBuilder();
        for (StepResult r : results) {
            if (experiment.equals(r.experiment) && !r.ok()) {
                sb.append("<p class=\"fail\">").append(escape(String.format(Locale.ROOT, "%s %s %,d x %,d B: %s",
                        r.transport, r.experiment, r.count, r.size, r.outcome))).append("</p>");
            }
        }
        return sb.toString();
    }

    private static List<StepResult> select(List<StepResult> results, String experiment) {
        List<StepResult> out = new ArrayList<>();
        for (StepResult r : results) {
            if (experiment.equals(r.experiment) && r.ok()) {
                out.add(r);
            }
        }
        return out;
    }

    private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
        "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000"};

    /** A log-log line chart, one series per {@code seriesOf} (the transport). */
    static <T> String chart(String xLabel, String yLabel, List<T> points, Function<T, String> seriesOf,
                            ToDoubleFunction<T> x, ToDoubleFunction<T> y) {
        if (points.isEmpty()) {
            return "";
        }
        int w = 760;
        int h = 380;
        int left = 80;
        int right = 150;
        int top = 40;
        int bottom = 60;
        double minX = Double.MAX_VALUE;
        double maxX = 0;
        double minY = Double.MAX_VALUE;
        double maxY = 0;
        Map<String, List<double[]>> series = new LinkedHashMap<>();
        for (T r : points) {
            double px = x.applyAsDouble(r);
            double py = y.applyAsDouble(r);
            if (!(px > 0) || !(py > 0)) {
                continue;
            }
            series.computeIfAbsent(seriesOf.apply(r), k -> new ArrayList<>()).add(new double[] {px, py});
            minX = Math.min(minX, px);
            maxX = Math.max(maxX, px);
            minY = Math.min(minY, py);
            maxY = Math.max(maxY, py);
        }
        if (series.isEmpty()) {
            return "";
        }
        double lx0 = Math.floor(Math.log10(minX));
        double lx1 = Math.max(lx0 + 1, Math.ceil(Math.log10(maxX)));
        double ly0 = Math.floor(Math.log10(minY));
        double ly1 = Math.max(ly0 + 1, Math.ceil(Math.log10(maxY)));
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">"
                + "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>", w, h, w, h));
        int pw = w - left - right;
        int ph = h - top - bottom;
        for (double d = lx0; d <= lx1; d++) {
            double px = left + (d - lx0) / (lx1 - lx0) * pw;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                    + "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">%s</text>", px, top, px, top + ph,
                    px, top + ph + 15, tick(d)));
        }
        for (double d = ly0; d <= ly1; d++) {
            double py = top + ph - (d - ly0) / (ly1 - ly0) * ph;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>", left, py, left + pw, py,
                    left - 5, py + 4, tick(d)));
        }
        sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>",
                left, top, pw, ph));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\">%s (log)</text>",
                left + pw / 2, h - 15, escape(xLabel)));
        sb.append(String.format(Locale.ROOT, "<text x=\"15\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
                + "transform=\"rotate(-90 15 %d)\">%s (log)</text>", top + ph / 2, top + ph / 2, escape(yLabel)));
        int i = 0;
        for (Map.Entry<String, List<double[]>> s : series.entrySet()) {
            // a transport keeps its colour from chart to chart; others (e.g. sync variants) take the rest in turn
            int known = Profiles.ALL.indexOf(s.getKey());
            String color = COLORS[(known >= 0 ? known : Profiles.ALL.size() + i) % COLORS.length];
            StringBuilder path = new StringBuilder();
            s.getValue().sort((a, b) -> Double.compare(a[0], b[0]));
            for (double[] p : s.getValue()) {
                double px = left + (Math.log10(p[0]) - lx0) / (lx1 - lx0) * pw;
                double py = top + ph - (Math.log10(p[1]) - ly0) / (ly1 - ly0) * ph;
                path.append(path.length() == 0 ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f", px, py));
                sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", px, py,
                        color));
            }
            sb.append(String.format(Locale.ROOT, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>", path,
                    color));
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                    + "stroke-width=\"3\"/><text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text>", left + pw + 15,
                    top + 15 + 20 * i, left + pw + 40, top + 15 + 20 * i, color, left + pw + 45, top + 19 + 20 * i,
                    escape(s.getKey())));
            i++;
        }
        sb.append("</svg>");
        return sb.toString();
    }

    private static String tick(double exponent) {
        double v = Math.pow(10, exponent);
        if (v >= 1e6) {
            return String.format(Locale.ROOT, "%.0fM", v / 1e6);
        }
        if (v >= 1e3) {
            return String.format(Locale.ROOT, "%.0fk", v / 1e3);
        }
        return v >= 1 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.3g", v);
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
