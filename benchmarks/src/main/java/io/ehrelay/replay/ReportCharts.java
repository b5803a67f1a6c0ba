package io.ehrelay.replay;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;

/**
 * The report's charts: one per experiment and the threads probe, each an SVG of log-scaled lines, a series per
 * transport (ehrelay solid in its own hue, stock dashed, raw dotted grey), with the failed steps listed below it.
 */
final class ReportCharts {

    private ReportCharts() {
    }

    /** One chart of the report: a file-name slug, its title, the SVG, the failed steps below it. */
    static final class Chart {
        private final String slug;
        private final String title;
        private final String svg;
        private final List<String> failureLines;

        Chart(String slug, String title, String svg, List<String> failureLines) {
            this.slug = slug;
            this.title = title;
            this.svg = svg;
            this.failureLines = failureLines;
        }

        String slug() {
            return slug;
        }

        String title() {
            return title;
        }

        String svg() {
            return svg;
        }

        List<String> failureLines() {
            return failureLines;
        }

        /** The failed steps as HTML paragraphs. */
        String failures() {
            StringBuilder sb = new StringBuilder();
            for (String f : failureLines) {
                sb.append("<p class=\"fail\">").append(Report.escape(f)).append("</p>");
            }
            return sb.toString();
        }

        /** The SVG as a file of its own: the title drawn at its top. */
        String standalone() {
            int at = svg.indexOf("/>", svg.indexOf("<rect ")) + 2;
            return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                    + svg.substring(0, at).replaceFirst("<svg ", "<svg font-family=\"sans-serif\" ")
                    + "<text x=\"20\" y=\"22\" font-size=\"14\">" + Report.escape(title)
                    + "</text>" + svg.substring(at) + "\n";
        }
    }

    /** How one chart draws its axes and series. */
    static final class ChartSpec {
        String xLabel;
        String yLabel;
        /** {@link #LOWER} or {@link #HIGHER}. */
        String direction;
        /** The x values as evenly spaced categories (e.g. E3's payloads, 0 included) instead of a log scale. */
        boolean categoricalX;
        Function<Double, String> xFormat = v -> Report.number(v);
        Function<String, String> legend = Function.identity();
        Predicate<String> faded = s -> false;

        ChartSpec(String xLabel, String yLabel, String direction) {
            this.xLabel = xLabel;
            this.yLabel = yLabel;
            this.direction = direction;
        }
    }

    /** Every chart with data, in report order (the HTML embeds them; the replay also writes each as an SVG file). */
    static List<Chart> charts(List<StepResult> results, List<ThreadsProbe.Row> threads) {
        List<Chart> out = new ArrayList<>();
        ToDoubleFunction<StepResult> seconds = r -> r.seconds;
        Function<StepResult, String> transport = r -> r.transport;
        Function<Double, String> bytes = v -> Report.bytes(v);
        ChartSpec e1 = new ChartSpec("element size", "seconds, first put → last arrival", Report.LOWER);
        e1.xFormat = bytes;
        add(out, "e1", "E1: " + countsOf(results, "E1") + " elements of growing size", chart(e1,
                select(results, "E1"), transport, r -> r.size, seconds), failures(results, "E1"));
        ChartSpec e2 = new ChartSpec("elements", "seconds, first put → last arrival", Report.LOWER);
        add(out, "e2", "E2: growing count of " + sizesOf(results, "E2") + "-byte elements", chart(e2,
                select(results, "E2"), transport, r -> r.count, seconds), failures(results, "E2"));
        ChartSpec e3 = new ChartSpec("payload", "p99 latency, µs", Report.LOWER);
        e3.categoricalX = true;
        e3.xFormat = bytes;
        e3.legend = t -> ReportTables.withNote(t);
        e3.faded = t -> !Report.waitsForPeers(t);
        add(out, "e3", "E3: synchronous put latency by payload (p99)", chart(e3, select(results, "E3"), transport,
                r -> r.size, r -> r.p99Micros), failures(results, "E3"));
        for (String e4 : Report.experimentsOf(results)) {
            if (!e4.startsWith("E4")) {
                continue;
            }
            ChartSpec spec = new ChartSpec("element size", "elements/s per member", Report.HIGHER);
            spec.xFormat = bytes;
            add(out, Report.slug(e4), e4 + " (mode/members): elements/s received per member (median member)", chart(spec,
                    select(results, e4), transport, r -> r.size, r -> r.elementsPerSecond()), failures(results, e4));
        }
        List<ThreadsProbe.Row> probed = new ArrayList<>();
        List<String> threadFailures = new ArrayList<>();
        for (ThreadsProbe.Row t : threads) {
            if (t.notProbed() == null) {
                probed.add(t);
            }
            if (t.notProbed() != null || !t.allReplicated()) {
                threadFailures.add(t.transport() + ": " + (t.notProbed() != null ? "not probed: " + t.notProbed()
                        : "FAIL at " + t.caches() + " caches (not all replicated)"));
            }
        }
        add(out, "threads", "Threads: JVM threads a pair of nodes adds, by replicated caches", chart(
                new ChartSpec("replicated caches", "threads added", Report.LOWER), probed,
                t -> t.transport(), t -> t.caches(), t -> Math.max(1, t.added())), threadFailures);
        return out;
    }

    private static String countsOf(List<StepResult> results, String experiment) {
        Set<String> v = new TreeSet<>();
        for (StepResult r : results) {
            if (experiment.equals(r.experiment)) {
                v.add(String.format(Locale.ROOT, "%,d", r.count));
            }
        }
        return v.size() == 1 ? v.iterator().next() : ReportVerdicts.join(v);
    }

    private static String sizesOf(List<StepResult> results, String experiment) {
        Set<String> v = new TreeSet<>();
        for (StepResult r : results) {
            if (experiment.equals(r.experiment)) {
                v.add(String.format(Locale.ROOT, "%,d", r.size));
            }
        }
        return v.size() == 1 ? v.iterator().next() : ReportVerdicts.join(v);
    }

    private static void add(List<Chart> out, String slug, String title, String svg, List<String> failures) {
        if (!svg.isEmpty() || !failures.isEmpty()) {
            out.add(new Chart(slug, title, svg, failures));
        }
    }

    /** The failed steps of an experiment, with their reasons, below its chart (a chart shows only what ran). */
    private static List<String> failures(List<StepResult> results, String experiment) {
        List<String> out = new ArrayList<>();
        for (StepResult r : results) {
            if (experiment.equals(r.experiment) && !r.ok()) {
                out.add(String.format(Locale.ROOT, "%s %s %,d x %,d B: %s", r.transport, r.experiment, r.count,
                        r.size, r.outcome));
            }
        }
        return out;
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

    /** How a series is drawn: ehrelay solid in its own hue, stock dashed, raw dotted grey. */
    static final class Style {
        final String kind;
        final String color;
        /** null: a solid line. */
        final String dash;
        final double width;
        /** circle, square or dot. */
        final String marker;
        final boolean hollow;

        Style(String kind, String color, String dash, double width, String marker, boolean hollow) {
            this.kind = kind;
            this.color = color;
            this.dash = dash;
            this.width = width;
            this.marker = marker;
            this.hollow = hollow;
        }
    }

    static Style style(String series, int spare) {
        String base = Profiles.base(series);
        boolean sync = Profiles.isSyncVariant(series);
        String hue = Report.HUES.get(base);
        if (hue == null) {
            hue = Report.SPARE_HUES[Math.abs(spare) % Report.SPARE_HUES.length];
        }
        if (Report.isRaw(series)) {
            return new Style("raw", Report.RAW_COLOR, "2,4", 2.5, "dot", false);
        }
        if (Report.isStock(series)) {
            return new Style("stock", hue, sync ? "9,3,2,3" : "7,4", 2, "square", sync);
        }
        return new Style("ehrelay", hue, null, sync ? 1.5 : 2.5, "circle", sync);
    }

    /**
     * A line chart with a log y axis, one series per {@code seriesOf} (the transport). The x axis is logarithmic
     * with a tick at every measured x value, or categorical ({@link ChartSpec#categoricalX}); both span the data
     * and no more. The direction ("lower is better") is written at the top of the plot.
     */
    static <T> String chart(ChartSpec spec, List<T> points, Function<T, String> seriesOf, ToDoubleFunction<T> x,
                            ToDoubleFunction<T> y) {
        Map<String, List<double[]>> series = new HashMap<>();
        TreeSet<Double> xs = new TreeSet<>();
        double minY = Double.MAX_VALUE;
        double maxY = 0;
        for (T r : points) {
            double px = x.applyAsDouble(r);
            double py = y.applyAsDouble(r);
            if (!(py > 0) || Double.isNaN(px) || Double.isInfinite(py) || (!spec.categoricalX && !(px > 0))) {
                continue;
            }
            String name = seriesOf.apply(r);
            List<double[]> s = series.get(name);
            if (s == null) {
                s = new ArrayList<>();
                series.put(name, s);
            }
            s.add(new double[] {px, py});
            xs.add(px);
            minY = Math.min(minY, py);
            maxY = Math.max(maxY, py);
        }
        if (series.isEmpty()) {
            return "";
        }
        List<String> names = new ArrayList<>(series.keySet());
        Collections.sort(names, Report.SERIES_ORDER);
        int maxLabel = 0;
        for (String n : names) {
            maxLabel = Math.max(maxLabel, spec.legend.apply(n).length());
        }
        int left = 70;
        int pw = 540;
        int top = 48;
        int ph = 280;
        int bottom = 56;
        int legendX = left + pw + 20;
        int w = legendX + 46 + (int) Math.ceil(maxLabel * 6.6) + 12;
        int h = Math.max(top + ph + bottom, top + 22 * names.size() + 10);
        final List<Double> xValues = new ArrayList<>(xs);
        final double lx0;
        final double lx1;
        if (spec.categoricalX) {
            lx0 = 0;
            lx1 = 0;
        } else {
            double a = Math.log10(xValues.get(0));
            double b = Math.log10(xValues.get(xValues.size() - 1));
            double pad = b > a ? 0.05 * (b - a) : 0.5;
            lx0 = a - pad;
            lx1 = b + pad;
        }
        double ly0 = Math.log10(minY);
        double ly1 = Math.log10(maxY);
        if (ly1 - ly0 < 0.2) {
            double mid = (ly0 + ly1) / 2;
            ly0 = mid - 0.1;
            ly1 = mid + 0.1;
        }
        double pad = 0.05 * (ly1 - ly0);
        ly0 -= pad;
        ly1 += pad;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">"
                + "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>", w, h, w, h));
        for (int i = 0; i < xValues.size(); i++) {
            double v = xValues.get(i);
            double px = xPos(spec, xValues, v, lx0, lx1, left, pw);
            sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                    + "<text class=\"xtick\" data-value=\"%s\" x=\"%.1f\" y=\"%d\" font-size=\"11\" "
                    + "text-anchor=\"middle\">%s</text>", px, top, px, top + ph, Report.plain(v), px, top + ph + 15,
                    Report.escape(spec.xFormat.apply(v))));
        }
        for (double v : logTicks(ly0, ly1)) {
            double py = top + ph - (Math.log10(v) - ly0) / (ly1 - ly0) * ph;
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>"
                    + "<text class=\"ytick\" data-value=\"%s\" x=\"%d\" y=\"%.1f\" font-size=\"11\" "
                    + "text-anchor=\"end\">%s</text>", left, py, left + pw, py, Report.plain(v), left - 5, py + 4, Report.number(v)));
        }
        sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#888\"/>", left, top, pw, ph));
        sb.append(String.format(Locale.ROOT, "<text class=\"xlabel\" x=\"%d\" y=\"%d\" font-size=\"12\" "
                + "text-anchor=\"middle\">%s</text>", left + pw / 2, top + ph + 38, Report.escape(spec.xLabel
                + (spec.categoricalX ? " (each measured value)" : " (log scale)"))));
        sb.append(String.format(Locale.ROOT, "<text class=\"ylabel\" x=\"15\" y=\"%d\" font-size=\"12\" "
                + "text-anchor=\"middle\" transform=\"rotate(-90 15 %d)\">%s</text>", top + ph / 2, top + ph / 2,
                Report.escape(spec.yLabel + " (log scale)")));
        sb.append(String.format(Locale.ROOT, "<text class=\"direction\" x=\"%d\" y=\"%d\" font-size=\"12\" "
                + "font-weight=\"bold\" text-anchor=\"end\">%s %s</text>", left + pw, top - 7,
                Report.LOWER.equals(spec.direction) ? "↓" : "↑", Report.escape(spec.direction)));
        // raw and stock first, ehrelay on top of them
        List<String> drawOrder = new ArrayList<>(names);
        Collections.reverse(drawOrder);
        Map<String, Style> styles = new HashMap<>();
        int spare = 0;
        for (String n : names) {
            styles.put(n, style(n, Report.HUES.containsKey(Profiles.base(n)) ? 0 : spare++));
        }
        for (String n : drawOrder) {
            Style st = styles.get(n);
            List<double[]> pts = series.get(n);
            Collections.sort(pts, (a, b) -> Double.compare(a[0], b[0]));
            StringBuilder path = new StringBuilder();
            StringBuilder marks = new StringBuilder();
            for (double[] p : pts) {
                double px = xPos(spec, xValues, p[0], lx0, lx1, left, pw);
                double py = top + ph - (Math.log10(p[1]) - ly0) / (ly1 - ly0) * ph;
                path.append(path.length() == 0 ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f", px, py));
                marks.append(marker(st, px, py, Report.escape(n + ": " + spec.xFormat.apply(p[0]) + " → " + Report.number(p[1]))));
            }
            sb.append(String.format(Locale.ROOT, "<g class=\"series\" data-series=\"%s\" data-kind=\"%s\"%s>",
                    Report.escape(n), st.kind, spec.faded.test(n) ? " opacity=\"0.55\"" : ""));
            sb.append(String.format(Locale.ROOT, "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s/>",
                    path, st.color, Report.plain(st.width), dashAttr(st)));
            sb.append(marks).append("</g>");
        }
        int i = 0;
        for (String n : names) {
            Style st = styles.get(n);
            int ly = top + 12 + 22 * i;
            sb.append(String.format(Locale.ROOT, "<g class=\"legend\" data-series=\"%s\"%s><line x1=\"%d\" y1=\"%d\" "
                    + "x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"%s\"%s/>", Report.escape(n),
                    spec.faded.test(n) ? " opacity=\"0.55\"" : "", legendX, ly, legendX + 36, ly, st.color,
                    Report.plain(st.width), dashAttr(st)));
            sb.append(marker(st, legendX + 18, ly, null));
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"12\">%s</text></g>",
                    legendX + 44, ly + 4, Report.escape(spec.legend.apply(n))));
            i++;
        }
        sb.append("</svg>");
        return sb.toString();
    }

    private static double xPos(ChartSpec spec, List<Double> xValues, double v, double lx0, double lx1, int left,
                               int pw) {
        if (spec.categoricalX) {
            return left + (xValues.indexOf(v) + 0.5) / xValues.size() * pw;
        }
        return left + (Math.log10(v) - lx0) / (lx1 - lx0) * pw;
    }

    private static String dashAttr(Style st) {
        return st.dash == null ? "" : " stroke-dasharray=\"" + st.dash + "\""
                + ("raw".equals(st.kind) ? " stroke-linecap=\"round\"" : "");
    }

    private static String marker(Style st, double x, double y, String tooltip) {
        String fill = st.hollow ? "#fff" : st.color;
        String title = tooltip == null ? "" : "<title>" + tooltip + "</title>";
        if ("square".equals(st.marker)) {
            return String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\" "
                    + "stroke=\"%s\" stroke-width=\"1.5\">%s</rect>", x - 3.5, y - 3.5, fill, st.color, title);
        }
        double r = "dot".equals(st.marker) ? 2.5 : 3.5;
        return String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\" stroke=\"%s\" "
                + "stroke-width=\"1.5\">%s</circle>", x, y, Report.plain(r), fill, st.color, title);
    }

    /** Tick values of a log axis from 10^lo to 10^hi: 1-2-5 steps, decades when the range is wide. */
    static List<Double> logTicks(double lo, double hi) {
        double[][] sets = {{1, 1.5, 2, 3, 5, 7}, {1, 2, 5}, {1, 3}, {1}};
        List<Double> ticks = new ArrayList<>();
        for (double[] set : sets) {
            ticks.clear();
            for (int e = (int) Math.floor(lo); e <= (int) Math.ceil(hi); e++) {
                for (double m : set) {
                    double v = m * Math.pow(10, e);
                    double l = Math.log10(v);
                    if (l >= lo - 1e-9 && l <= hi + 1e-9) {
                        ticks.add(v);
                    }
                }
            }
            if (ticks.size() <= 10) {
                break;
            }
        }
        if (ticks.size() > 8) {
            List<Double> thinned = new ArrayList<>();
            int step = (ticks.size() + 7) / 8;
            for (int i = 0; i < ticks.size(); i += step) {
                thinned.add(ticks.get(i));
            }
            ticks = thinned;
        }
        if (ticks.size() < 2) {
            ticks.clear();
            ticks.add(round(Math.pow(10, lo + 0.1 * (hi - lo))));
            ticks.add(round(Math.pow(10, hi - 0.1 * (hi - lo))));
        }
        return ticks;
    }

    private static double round(double v) {
        return new BigDecimal(v).round(new MathContext(2)).doubleValue();
    }
}
