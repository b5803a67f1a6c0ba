package io.ehrelay.replay;

import java.util.Locale;

/** One measured step of E1/E2 (a transfer) or E3 (a latency sweep point). Immutable. */
final class StepResult {

    static final String CSV_HEADER = "experiment,transport,count,size,seconds,blog_seconds,mb_per_s,elements_per_s,"
            + "writer_peak_heap_mb,reader_peak_heap_mb,p50_us,p99_us,max_us,outcome,put_loop_seconds,"
            + "writer_cpu_s,reader_cpu_s,writer_alloc_mb,reader_alloc_mb,profile,put_loop_cpu_seconds";

    final String experiment;
    final String transport;
    final int count;
    final int size;
    final double seconds;
    final double blogSeconds;
    final long writerPeakHeap;
    final long readerPeakHeap;
    final double p50Micros;
    final double p99Micros;
    final double maxMicros;
    final String outcome;
    /** E1/E2: how long the writer's put loop took (the time its application thread was busy or blocked). */
    final double putSeconds;
    /**
     * E1/E2: CPU seconds the writer's application thread used in its put loop: what the puts cost that thread,
     * without the time it waited (NaN: unknown).
     */
    double putCpuSeconds = Double.NaN;
    /** E1/E2: CPU seconds each node's process used from the timed step's start to the last arrival; NaN: unknown. */
    double writerCpuSeconds = Double.NaN;
    double readerCpuSeconds = Double.NaN;
    /** E1/E2: bytes each node's threads allocated on the heap in the same window; -1: unknown. */
    long writerAllocBytes = -1;
    long readerAllocBytes = -1;
    /** The replay profile the step ran under ({@code default}: what users run; {@code tuned}). */
    String profile = "tuned";

    StepResult(String experiment, String transport, int count, int size, double seconds, double blogSeconds,
               long writerPeakHeap, long readerPeakHeap, double p50Micros, double p99Micros, double maxMicros,
               String outcome) {
        this(experiment, transport, count, size, seconds, blogSeconds, writerPeakHeap, readerPeakHeap, p50Micros,
                p99Micros, maxMicros, outcome, Double.NaN);
    }

    StepResult(String experiment, String transport, int count, int size, double seconds, double blogSeconds,
               long writerPeakHeap, long readerPeakHeap, double p50Micros, double p99Micros, double maxMicros,
               String outcome, double putSeconds) {
        this.putSeconds = putSeconds;
        this.experiment = experiment;
        this.transport = transport;
        this.count = count;
        this.size = size;
        this.seconds = seconds;
        this.blogSeconds = blogSeconds;
        this.writerPeakHeap = writerPeakHeap;
        this.readerPeakHeap = readerPeakHeap;
        this.p50Micros = p50Micros;
        this.p99Micros = p99Micros;
        this.maxMicros = maxMicros;
        this.outcome = outcome;
    }

    static StepResult failed(String experiment, String transport, int count, int size, String reason) {
        return new StepResult(experiment, transport, count, size, Double.NaN, Double.NaN, 0, 0, Double.NaN,
                Double.NaN, Double.NaN, "FAIL(" + reason + ")");
    }

    boolean ok() {
        return "ok".equals(outcome);
    }

    /** E3 rows are latency points; E1, E2 and E4 rows are transfers. */
    boolean isLatency() {
        return "E3".equals(experiment);
    }

    /** The step within its experiment: count and size (E3: the payload). */
    String stepKey() {
        return count + "x" + size;
    }

    double megabytesPerSecond() {
        return (double) count * size / 1e6 / seconds;
    }

    double elementsPerSecond() {
        return count / seconds;
    }

    /** The bytes the step replicated (values only). */
    double payloadBytes() {
        return (double) count * size;
    }

    /** Both nodes' CPU seconds per GB replicated (NaN when unknown). */
    double cpuSecondsPerGigabyte() {
        return (writerCpuSeconds + readerCpuSeconds) / (payloadBytes() / 1e9);
    }

    /** Heap bytes a node allocated per replicated byte (NaN when unknown). */
    double allocPerByte(long allocated) {
        return allocated < 0 ? Double.NaN : allocated / payloadBytes();
    }

    String csv() {
        return String.format(Locale.ROOT, "%s,%s,%d,%d,%.4f,%.4f,%.1f,%.0f,%d,%d,%.1f,%.1f,%.1f,%s,%.4f,%.3f,%.3f,%d,%d,%s,%.4f",
                experiment, transport, count, size, seconds, blogSeconds, megabytesPerSecond(), elementsPerSecond(),
                writerPeakHeap >> 20, readerPeakHeap >> 20, p50Micros, p99Micros, maxMicros,
                outcome.replace(',', ';'), putSeconds, writerCpuSeconds, readerCpuSeconds,
                writerAllocBytes < 0 ? -1 : writerAllocBytes >> 20, readerAllocBytes < 0 ? -1 : readerAllocBytes >> 20,
                profile, putCpuSeconds);
    }

    /** A row of {@link #csv()} read back (to render a report again from a run's CSV). */
    static StepResult parseCsv(String line) {
        String[] f = line.split(",", -1);
        if (f.length < 14) {
            throw new IllegalArgumentException("not a replay CSV row: " + line);
        }
        StepResult r = new StepResult(f[0], f[1], Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                Double.parseDouble(f[4]), Double.parseDouble(f[5]), Long.parseLong(f[8]) << 20,
                Long.parseLong(f[9]) << 20, Double.parseDouble(f[10]), Double.parseDouble(f[11]),
                Double.parseDouble(f[12]), f[13], f.length > 14 ? Double.parseDouble(f[14]) : Double.NaN);
        if (f.length > 19) { // CSVs of runs before the profiles lack these
            r.writerCpuSeconds = Double.parseDouble(f[15]);
            r.readerCpuSeconds = Double.parseDouble(f[16]);
            long w = Long.parseLong(f[17]);
            long rd = Long.parseLong(f[18]);
            r.writerAllocBytes = w < 0 ? -1 : w << 20;
            r.readerAllocBytes = rd < 0 ? -1 : rd << 20;
            r.profile = f[19];
        }
        if (f.length > 20) { // CSVs of runs before the put loop's CPU time lack it
            r.putCpuSeconds = Double.parseDouble(f[20]);
        }
        return r;
    }
}
