package io.ehrelay.replay;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The report's verdict: per experiment, the fastest ehrelay transport and how it compares with the best stock
 * series and the raw stream, measured in the same run; and each ehrelay step's ratio to those baselines.
 */
final class ReportVerdicts {

    private ReportVerdicts() {
    }

    /** One line of the verdict: an experiment's winner among the ehrelay transports and how it compares. */
    static final class Verdict {
        final String experiment;
        /** The fastest (E3: lowest latency) ehrelay transport, or null when none completed. */
        final String winner;
        /** Throughput ÷ the best stock series (geometric mean over the steps); E3: best waiting stock's p99 ÷ the
         * winner's. NaN when there is no stock series to compare with. */
        final double vsStock;
        /** Throughput as a fraction of the raw stream (geometric mean over the steps); NaN when raw did not run. */
        final double vsRaw;
        final String text;

        Verdict(String experiment, String winner, double vsStock, double vsRaw, String text) {
            this.experiment = experiment;
            this.winner = winner;
            this.vsStock = vsStock;
            this.vsRaw = vsRaw;
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** The verdict: one line per experiment (and per synchronous group where -sync variants ran). */
    static List<Verdict> verdicts(List<StepResult> results) {
        List<Verdict> out = new ArrayList<>();
        for (String e : Report.experimentsOf(results)) {
            List<StepResult> rows = Report.rowsOf(results, e);
            if ("E3".equals(e)) {
                Verdict v = latencyVerdict(rows);
                if (v != null) {
                    out.add(v);
                }
                continue;
            }
            for (boolean sync : new boolean[] {false, true}) {
                Verdict v = throughputVerdict(e, rows, sync);
                if (v != null) {
                    out.add(v);
                }
            }
        }
        return out;
    }

    private static Verdict throughputVerdict(String experiment, List<StepResult> rows, boolean sync) {
        List<String> steps = Report.stepsOf(rows);
        Map<String, Map<String, StepResult>> by = Report.byTransportAndStep(rows);
        List<String> candidates = new ArrayList<>();
        List<String> stocks = new ArrayList<>();
        for (String t : Report.transportsOf(rows)) {
            if (Profiles.isSyncVariant(t) != sync) {
                continue;
            }
            if (Report.isEhrelay(t)) {
                candidates.add(t);
            } else if (Report.isStock(t)) {
                stocks.add(t);
            }
        }
        if (candidates.isEmpty()) {
            return null;
        }
        String label = Report.describe(experiment) + (sync ? ", synchronous puts" : "") + " (throughput, " + Report.HIGHER + ")";
        List<String> complete = new ArrayList<>();
        List<String> incomplete = new ArrayList<>();
        for (String t : candidates) {
            (okSteps(by.get(t)) == steps.size() ? complete : incomplete).add(t);
        }
        List<String> pool = complete.isEmpty() ? candidates : complete;
        String winner = null;
        double best = 0;
        for (String t : pool) {
            double score = geoMeanMegabytes(by.get(t));
            if (score > best) {
                best = score;
                winner = t;
            }
        }
        StringBuilder text = new StringBuilder(label).append(": ");
        if (winner == null) {
            text.append("no ehrelay transport completed a step");
            return new Verdict(experiment, null, Double.NaN, Double.NaN, text.toString());
        }
        Map<String, StepResult> w = by.get(winner);
        List<Double> stockRatios = new ArrayList<>();
        Set<String> bestStocks = new LinkedHashSet<>();
        List<Double> rawRatios = new ArrayList<>();
        for (String step : steps) {
            StepResult r = w.get(step);
            if (r == null || !r.ok()) {
                continue;
            }
            StepResult s = fastest(by, stocks, step);
            if (s != null) {
                stockRatios.add(s.seconds / r.seconds);
                bestStocks.add(s.transport);
            }
            StepResult raw = by.containsKey(Profiles.RAW) ? by.get(Profiles.RAW).get(step) : null;
            if (raw != null && raw.ok()) {
                rawRatios.add(raw.seconds / r.seconds);
            }
        }
        int ok = okSteps(w);
        text.append(winner).append(String.format(Locale.ROOT, " fastest, %,.0f MB/s", best)).append(ok == 1
                ? steps.size() == 1 ? " (1 step)" : " (1 of " + steps.size() + " steps)"
                : " (geometric mean of " + ok + (ok == steps.size() ? " steps)" : " of " + steps.size() + " steps)"));
        double vsStock = geoMean(stockRatios);
        if (stockRatios.isEmpty()) {
            text.append("; no stock series completed a step to compare with");
        } else {
            text.append("; ").append(ratio(vsStock)).append(" the best stock series (").append(range(stockRatios,
                    false)).append("best stock: ").append(join(bestStocks)).append(")");
        }
        double vsRaw = geoMean(rawRatios);
        if (rawRatios.isEmpty()) {
            text.append("; raw: not measured");
        } else {
            text.append("; ").append(percent(vsRaw)).append(" of raw");
            if (rawRatios.size() > 1) {
                text.append(" (").append(range(rawRatios, true)).append(")");
            }
        }
        if (!complete.isEmpty() && !incomplete.isEmpty()) {
            List<String> failed = new ArrayList<>();
            for (String t : incomplete) {
                failed.add(t + " failed " + (steps.size() - okSteps(by.get(t))) + " of " + steps.size());
            }
            text.append("; not ranked: ").append(join(failed));
        }
        return new Verdict(experiment, winner, vsStock, vsRaw, text.toString());
    }

    private static Verdict latencyVerdict(List<StepResult> rows) {
        Map<String, Map<String, StepResult>> by = Report.byTransportAndStep(rows);
        Set<Integer> payloads = new TreeSet<>();
        for (StepResult r : rows) {
            if (r.ok()) {
                payloads.add(r.size);
            }
        }
        List<String> candidates = new ArrayList<>();
        List<String> stocks = new ArrayList<>();
        List<String> noWait = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        for (String t : Report.transportsOf(rows)) {
            if (!Report.waitsForPeers(t)) {
                noWait.add(t);
            } else if (Report.isEhrelay(t)) {
                if (okSteps(by.get(t)) == payloads.size() && okSteps(by.get(t)) == by.get(t).size()) {
                    candidates.add(t);
                } else {
                    failed.add(t);
                }
            } else if (Report.isStock(t) && okSteps(by.get(t)) > 0) {
                stocks.add(t);
            }
        }
        if (candidates.isEmpty() && failed.isEmpty()) {
            return null;
        }
        StringBuilder text = new StringBuilder(Report.describe("E3")).append(" (").append(Report.LOWER).append("): ");
        String winner = lowestP99(by, candidates);
        double vsStock = Double.NaN;
        if (winner == null) {
            text.append("no ehrelay transport completed E3");
        } else {
            double p99 = median(by.get(winner), true);
            double p50 = median(by.get(winner), false);
            text.append(winner).append(String.format(Locale.ROOT,
                    " lowest, p99 %,.0f µs, p50 %,.0f µs (medians of %d payloads)", p99, p50, payloads.size()));
            String stock = lowestP99(by, stocks);
            if (stock == null) {
                text.append("; no stock series that waits for its peer to compare with");
            } else {
                double sp99 = median(by.get(stock), true);
                double sp50 = median(by.get(stock), false);
                vsStock = sp99 / p99;
                text.append(String.format(Locale.ROOT, "; p99 %s lower than the best stock that waits (%s: p99 %,.0f µs, "
                        + "p50 %,.0f µs)", ratio(vsStock), stock, sp99, sp50));
            }
            text.append("; raw: not measured in E3");
        }
        if (!failed.isEmpty()) {
            text.append("; not ranked (failed): ").append(join(failed));
        }
        if (!noWait.isEmpty()) {
            text.append("; not ranked, \"synchronous\" mode ").append(Report.NO_WAIT).append(": ").append(join(noWait));
        }
        return new Verdict("E3", winner, vsStock, Double.NaN, text.toString());
    }

    private static String lowestP99(Map<String, Map<String, StepResult>> by, List<String> among) {
        String winner = null;
        double best = Double.MAX_VALUE;
        for (String t : among) {
            double p99 = median(by.get(t), true);
            if (p99 < best) {
                best = p99;
                winner = t;
            }
        }
        return winner;
    }

    private static double median(Map<String, StepResult> steps, boolean p99) {
        List<Double> v = new ArrayList<>();
        for (StepResult r : steps.values()) {
            if (r.ok()) {
                v.add(p99 ? r.p99Micros : r.p50Micros);
            }
        }
        if (v.isEmpty()) {
            return Double.NaN;
        }
        Collections.sort(v);
        int n = v.size();
        return n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    static int okSteps(Map<String, StepResult> steps) {
        int n = 0;
        if (steps != null) {
            for (StepResult r : steps.values()) {
                if (r.ok()) {
                    n++;
                }
            }
        }
        return n;
    }

    private static double geoMeanMegabytes(Map<String, StepResult> steps) {
        List<Double> v = new ArrayList<>();
        for (StepResult r : steps.values()) {
            if (r.ok()) {
                v.add(r.megabytesPerSecond());
            }
        }
        return v.isEmpty() ? 0 : geoMean(v);
    }

    private static double geoMean(List<Double> values) {
        if (values.isEmpty()) {
            return Double.NaN;
        }
        double sum = 0;
        for (double v : values) {
            sum += Math.log(v);
        }
        return Math.exp(sum / values.size());
    }

    /** The fastest of {@code among} at {@code step} (ok steps only), or null. */
    static StepResult fastest(Map<String, Map<String, StepResult>> by, List<String> among, String step) {
        StepResult best = null;
        for (String t : among) {
            StepResult r = by.get(t).get(step);
            if (r != null && r.ok() && (best == null || r.seconds < best.seconds)) {
                best = r;
            }
        }
        return best;
    }

    /** "2.2×–4.5× by step; " (empty for a single step). */
    private static String range(List<Double> values, boolean percent) {
        if (values.size() < 2) {
            return "";
        }
        double lo = Collections.min(values);
        double hi = Collections.max(values);
        return (percent ? percent(lo) + "–" + percent(hi) + " by step" : ratio(lo) + "–" + ratio(hi) + " by step; ");
    }

    static String ratio(double v) {
        return String.format(Locale.ROOT, v >= 10 ? "%.0f×" : "%.1f×", v);
    }

    static String percent(double v) {
        return String.format(Locale.ROOT, "%.0f%%", 100 * v);
    }

    static String join(Collection<String> items) {
        StringBuilder sb = new StringBuilder();
        for (String s : items) {
            sb.append(sb.length() == 0 ? "" : ", ").append(s);
        }
        return sb.toString();
    }

    // ----------------------------------------------------------------------------------------------- ratios

    static String baselineName(String baseline) {
        return Profiles.RAW.equals(baseline) ? "the raw TCP stream"
                : Profiles.STOCK_RMI.equals(baseline) ? "stock Ehcache RMI"
                : Profiles.STOCK_RMI_SYNC.equals(baseline) ? "stock Ehcache RMI, synchronous"
                : "ehcache-jgroupsreplication 1.7 (" + baseline + ")";
    }

    /**
     * Throughput of each ehrelay transport step by step, relative to the raw stream (the physical reference) and
     * to stock Ehcache RMI (what users run today), both measured in the same run (as text; the report has the
     * same as tables).
     */
    static String ratios(List<StepResult> results) {
        StringBuilder sb = new StringBuilder();
        for (String baseline : Report.BASELINES) {
            StringBuilder lines = new StringBuilder();
            for (StepResult[] p : pairs(results, baseline)) {
                StepResult r = p[0];
                StepResult b = p[1];
                lines.append(String.format(Locale.ROOT, "  %s %,d x %,d B: %s %.1f MB/s, %s %.1f MB/s -> %s%n",
                        r.experiment, r.count, r.size, r.transport, r.megabytesPerSecond(), baseline,
                        b.megabytesPerSecond(), Profiles.RAW.equals(baseline)
                                ? String.format(Locale.ROOT, "%.0f%%", 100 * b.seconds / r.seconds)
                                : String.format(Locale.ROOT, "%.1fx", b.seconds / r.seconds)));
            }
            if (lines.length() > 0) {
                sb.append("throughput relative to ").append(baselineName(baseline)).append(", same run:\n")
                        .append(lines);
            }
        }
        return sb.toString();
    }

    /** (ehrelay step, baseline step) pairs: synchronous variants with the synchronous baseline only. */
    static List<StepResult[]> pairs(List<StepResult> results, String baseline) {
        boolean syncBaseline = Profiles.isSyncVariant(baseline);
        List<StepResult[]> out = new ArrayList<>();
        for (StepResult r : results) {
            if (!r.ok() || !Report.isEhrelay(r.transport) || r.isLatency()
                    || Profiles.isSyncVariant(r.transport) != syncBaseline) {
                continue;
            }
            for (StepResult b : results) {
                if (b.ok() && baseline.equals(b.transport) && b.experiment.equals(r.experiment)
                        && b.stepKey().equals(r.stepKey())) {
                    out.add(new StepResult[] {r, b});
                }
            }
        }
        return out;
    }
}
