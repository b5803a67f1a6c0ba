package io.ehrelay.replay;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The report's tables, written as Markdown and HTML at once ({@link Doc}): throughput per experiment and
 * step, the ratios to each baseline, synchronous latency, and the threads a pair of nodes adds.
 */
final class ReportTables {

    private ReportTables() {
    }

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
    static final class Doc {
        final StringBuilder md = new StringBuilder();
        final StringBuilder html = new StringBuilder();

        void heading(int level, String text, String id) {
            md.append(md.length() == 0 || md.toString().endsWith("\n\n") ? "" : "\n").append(repeat('#', level))
                    .append(' ').append(text).append("\n\n");
            html.append("<h").append(level).append('>')
                    .append(Report.escape(text)).append("</h").append(level).append('>');
        }

        void para(String text, String cssClass) {
            md.append(text).append("\n\n");
            html.append("<p").append(cssClass == null ? "" : " class=\"" + cssClass + "\"").append('>')
                    .append(Report.escape(text)).append("</p>");
        }

        void bullets(List<String> items, String cssClass) {
            if (items.isEmpty()) {
                return;
            }
            html.append("<ul").append(cssClass == null ? "" : " class=\"" + cssClass + "\"").append('>');
            for (String i : items) {
                md.append("- ").append(i).append('\n');
                html.append("<li>").append(Report.escape(i)).append("</li>");
            }
            md.append('\n');
            html.append("</ul>");
        }

        void table(Table t) {
            if (t.rows.isEmpty()) {
                return;
            }
            md.append(t.caption).append(":\n\n|");
            html.append("<table><caption>").append(Report.escape(t.caption)).append("</caption><thead><tr>");
            StringBuilder rule = new StringBuilder("|");
            for (int c = 0; c < t.headers.size(); c++) {
                md.append(' ').append(mdCell(t.headers.get(c))).append(" |");
                rule.append(t.textColumns.contains(c) ? "---|" : "---:|");
                html.append("<th>").append(Report.escape(t.headers.get(c))).append("</th>");
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
                    html.append(cls.isEmpty() ? "<td>" : "<td class=\"" + cls + "\">").append(Report.escape(cell))
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

    static void throughputTables(Doc doc, String experiment, List<StepResult> rows) {
        List<String> transports = Report.transportsOf(rows);
        List<String> steps = Report.stepsOf(rows);
        Map<String, Map<String, StepResult>> by = Report.byTransportAndStep(rows);
        Map<String, String> labels = new LinkedHashMap<>();
        for (StepResult r : rows) {
            labels.put(r.stepKey(), Report.stepLabel(r));
        }
        List<String> headers = new ArrayList<>();
        headers.add("step");
        headers.addAll(transports);
        Table mbs = new Table(experiment + ": MB/s from the first put to the last arrival (" + Report.HIGHER + ")", headers,
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
            if (Report.isEhrelay(t)) {
                ehrelay.add(t);
            } else if (Report.isStock(t)) {
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
                + Report.HIGHER + "; synchronous runs ÷ synchronous stock)", rh, textCols == 3 ? new Integer[] {0, 1, 2}
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
            Table vsRaw = new Table(experiment + ": ehrelay throughput as a share of the raw TCP stream (" + Report.HIGHER
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

    static Table baselineTable(String experiment, String baseline, List<StepResult[]> pairs) {
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
            labels.put(p[0].stepKey(), Report.stepLabel(p[0]));
            double v = p[1].seconds / p[0].seconds;
            cells.put(p[0].stepKey() + "|" + p[0].transport, Profiles.RAW.equals(baseline) ? ReportVerdicts.percent(v) : ReportVerdicts.ratio(v));
        }
        Collections.sort(transports, Report.SERIES_ORDER);
        List<String> headers = new ArrayList<>();
        headers.add("step");
        headers.add(baseline + " MB/s");
        for (String t : transports) {
            headers.add(t + (Profiles.RAW.equals(baseline) ? " % of " : " ÷ ") + baseline);
        }
        Table t = new Table(experiment + ": throughput relative to " + ReportVerdicts.baselineName(baseline) + " (" + Report.HIGHER + ")",
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
        return Report.waitsForPeers(transport) ? transport : transport + " (" + Report.NO_WAIT + ")";
    }

    static void latencyTables(Doc doc, List<StepResult> rows) {
        List<String> transports = Report.transportsOf(rows);
        Map<String, Map<String, StepResult>> by = Report.byTransportAndStep(rows);
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
            anyNoWait |= !Report.waitsForPeers(t);
        }
        Table pivot = new Table("E3: synchronous put latency, p50 / p99 in µs, by payload (" + Report.LOWER + ")", headers);
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
            doc.para("Marked \"" + Report.NO_WAIT + "\": that transport's \"synchronous\" mode sends and returns without "
                    + "waiting for any peer (the old ehcache-jgroupsreplication module), so its figures are a local "
                    + "send, not a replicated put; it is left out of the verdict.", null);
        }
        Table all = new Table("E3: every payload, latency in µs (" + Report.LOWER + ")", Arrays.asList("transport",
                "payload B", "calls", "p50 µs", "p99 µs", "max µs", "result"), 0, 6);
        for (StepResult r : rows) {
            all.row(Arrays.asList(withNote(r.transport), String.format(Locale.ROOT, "%,d", r.size),
                    String.format(Locale.ROOT, "%,d", r.count), num1(r.p50Micros), num1(r.p99Micros),
                    num1(r.maxMicros), r.outcome));
        }
        doc.table(all);
    }

    static Table threadsTable(List<ThreadsProbe.Row> threads) {
        String[] header = ThreadsProbe.Row.HEADER.split("\n")[0].split("\\|");
        List<String> headers = new ArrayList<>();
        for (int i = 1; i < header.length; i++) {
            headers.add(header[i].trim());
        }
        Table t = new Table("Threads-per-region probe: threads a pair of nodes adds (" + Report.LOWER + ")", headers, 0,
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

    static String num1(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%,.1f", v);
    }

    static String num3(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%,.3f", v);
    }
}
