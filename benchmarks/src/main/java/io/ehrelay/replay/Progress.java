package io.ehrelay.replay;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The progress of a run: "step n of N", the time elapsed and an estimate of the time left (from the time the
 * steps done so far took per unit of their estimated cost). On a terminal one line is rewritten in place; when
 * the output is a file or a pipe, each step starts a plain line and nothing is rewritten.
 */
final class Progress {
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
