package io.ehrelay.replay;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * What the replay prints while it runs and at its end (a row per step, the summary), and the CSV of all steps.
 */
final class ReportConsole {

    private ReportConsole() {
    }

    /** The width of a column holding {@code names}: the longest name, at least {@code min}. */
    static int width(int min, Collection<String> names) {
        int w = min;
        for (String n : names) {
            w = Math.max(w, n.length());
        }
        return w;
    }

    static String tableHeader() {
        return tableHeader(Report.EXPERIMENT_WIDTH, Report.TRANSPORT_WIDTH);
    }

    static String tableHeader(int experimentWidth, int transportWidth) {
        return String.format(Locale.ROOT, "%-" + experimentWidth + "s %-" + transportWidth
                + "s %10s %9s %9s %9s %9s %11s %8s %8s %7s %7s %8s %9s  %s", "exp", "transport", "count", "size B",
                "s(put)", "s(blog)", "MB/s", "elements/s", "heapW MB", "heapR MB", "loop s", "loopCPU", "CPU s/GB",
                "alloc W/R",
                "result");
    }

    static String tableRow(StepResult r) {
        return tableRow(r, Math.max(Report.EXPERIMENT_WIDTH, r.experiment.length()),
                Math.max(Report.TRANSPORT_WIDTH, r.transport.length()));
    }

    static String tableRow(StepResult r, int experimentWidth, int transportWidth) {
        String lead = String.format(Locale.ROOT, "%-" + experimentWidth + "s %-" + transportWidth + "s ", r.experiment,
                r.transport);
        if (r.isLatency()) {
            return lead + String.format(Locale.ROOT, "%10s %,9d  sync put latency: p50 %.1f us, p99 %.1f us, max %.1f us"
                    + " (%d calls)%s  %s", "", r.size, r.p50Micros, r.p99Micros, r.maxMicros, r.count,
                    Report.waitsForPeers(r.transport) ? "" : " (" + Report.NO_WAIT + ")", r.outcome);
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
        lines.add("run took " + Report.duration(elapsed));
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
}
