package io.ehrelay.replay;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * What a replay run is asked to do: the experiments' steps, the options with their defaults, and the command line
 * that sets them ({@link #parse}, {@code --help}). {@link Replay} runs it.
 */
class ReplayOptions {

    static final int[] E1_SIZES = {1280, 2560, 5120, 10240, 20480, 40960, 81920, 163840, 327680};
    static final int[] E2_COUNTS = {10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000};
    static final int[] E1_QUICK = {1280, 10240, 40960, 81920};
    static final int[] E2_QUICK = {10_000, 40_000, 160_000, 320_000};
    static final int[] E3_PAYLOADS = {0, 1024, 2048, 4096, 8192, 16384};
    /** The default set (a verdict in minutes): two steps of E1 and E2, three E3 payloads, the default profile. */
    static final int[] E1_VERDICT = {10240, 40960};
    static final int[] E2_VERDICT = {40_000, 160_000};
    static final int[] E3_VERDICT = {0, 4096, 16384};

    static final List<String> EXPERIMENTS = Arrays.asList("e1", "e2", "e3", "e4", "threads");

    final List<String> transports = new ArrayList<>(Profiles.ALL);
    final List<String> experiments = new ArrayList<>(Arrays.asList("e1", "e2", "e3"));
    int[] e1Sizes = E1_VERDICT;
    int[] e2Counts = E2_VERDICT;
    int e1Count = 10_000;
    int e2Size = 1280;
    int e3Calls = 1000;
    int[] e3Payloads = E3_VERDICT;
    int[] e4Nodes = {4};
    int[] e4Sizes = {1024, 10240, 102400};
    /** 0: about 64 MB per writer, 500 to 20,000 elements. */
    int e4Count = 0;
    List<String> e4Modes = Arrays.asList("n-n");
    String e4Heap = "1536m";
    String heap = "2g";
    /** The profiles each step runs under, in order: {@code default} (what users run) and {@code tuned}. */
    List<String> profiles = new ArrayList<>(Arrays.asList(NodeProcess.DEFAULT));
    int reps = 1;
    long stepTimeoutSeconds = 600;
    String discovery = "manual";
    Path out = Paths.get("results");
    /** {@code --render}: the CSV of an earlier run to write the report of again; null for a run. */
    Path render;

    /** A command line the replay cannot run: its message names the option and what it takes. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    /**
     * Reads the command line; {@code false} when it asked for the usage (printed). Every value is checked before
     * anything runs.
     *
     * @throws UsageException naming the option, the value and what it takes
     */
    boolean parse(String[] args) throws UsageException {
        boolean heapGiven = false;
        boolean full = false;
        boolean quick = false;
        boolean experimentsGiven = false;
        Set<String> given = new HashSet<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            given.add(a);
            switch (a) {
                case "-h":
                case "--help":
                case "help":
                    System.out.println(usage());
                    return false;
                case "--full":
                    // the full set: every step of E1 and E2, E3, the threads probe, E4 at 2, 4, 8 members n-n and 1-n
                    full = true;
                    break;
                case "--quick":
                    // the quick set: four steps of E1 and E2, every E3 payload, under both profiles
                    quick = true;
                    break;
                case "--profile": {
                    String p = value(args, ++i, a);
                    profiles.clear();
                    if ("both".equals(p)) {
                        profiles.addAll(Arrays.asList(NodeProcess.DEFAULT, NodeProcess.TUNED));
                    } else if (NodeProcess.DEFAULT.equals(p) || NodeProcess.TUNED.equals(p)) {
                        profiles.add(p);
                    } else {
                        throw new UsageException("--profile: '" + p + "' is not default, tuned or both");
                    }
                    break;
                }
                case "--transports":
                    transports.clear();
                    transports.addAll(list(a, value(args, ++i, a)));
                    break;
                case "--experiments":
                    experimentsGiven = true;
                    experiments.clear();
                    experiments.addAll(oneOf(a, list(a, value(args, ++i, a).toLowerCase(Locale.ROOT)), EXPERIMENTS));
                    break;
                case "--e1-sizes":
                    e1Sizes = ints(a, value(args, ++i, a), 1, 64 << 20);
                    break;
                case "--e2-counts":
                    e2Counts = ints(a, value(args, ++i, a), 1, 100_000_000);
                    break;
                case "--e1-count":
                    e1Count = number(a, value(args, ++i, a), 1, 100_000_000);
                    break;
                case "--e4-nodes":
                    e4Nodes = ints(a, value(args, ++i, a), 2, 16);
                    break;
                case "--e4-sizes":
                    e4Sizes = ints(a, value(args, ++i, a), 1, 64 << 20);
                    break;
                case "--e4-count":
                    e4Count = number(a, value(args, ++i, a), 1, 100_000_000);
                    break;
                case "--e4-modes":
                    e4Modes = oneOf(a, list(a, value(args, ++i, a)), Arrays.asList("n-n", "1-n"));
                    break;
                case "--e4-heap":
                    e4Heap = heapSize(a, value(args, ++i, a));
                    break;
                case "--e3-payloads":
                    e3Payloads = ints(a, value(args, ++i, a), 0, 64 << 20);
                    break;
                case "--e3-calls":
                    e3Calls = number(a, value(args, ++i, a), 1, 10_000_000);
                    break;
                case "--heap":
                    heap = heapSize(a, value(args, ++i, a));
                    heapGiven = true;
                    break;
                case "--reps":
                    reps = number(a, value(args, ++i, a), 1, 100);
                    break;
                case "--step-timeout":
                    stepTimeoutSeconds = number(a, value(args, ++i, a), 1, 86_400);
                    break;
                case "--discovery":
                    discovery = oneOf(a, Arrays.asList(value(args, ++i, a)), Arrays.asList("manual", "multicast"))
                            .get(0);
                    break;
                case "--out":
                    out = Paths.get(value(args, ++i, a));
                    break;
                case "--render":
                    render = Paths.get(value(args, ++i, a));
                    if (!Files.isRegularFile(render)) {
                        throw new UsageException("--render: no such file '" + render + "'");
                    }
                    break;
                default:
                    throw new UsageException("unknown option '" + a + "'");
            }
        }
        if (full && quick) {
            throw new UsageException("--full and --quick: choose one set");
        }
        if (!full && !quick && !given.contains("--transports")) {
            // the verdict set: stock's synchronous variant (half a minute at E2 alone) and the UDP stacks of both
            // JGroups series (100 s of 5 min 30 s on 2026-11-27; the TCP stacks stand for JGroups) are the sets'
            transports.removeIf(t -> Profiles.isSyncVariant(t) || Profiles.isUdpStack(t));
        }
        if (full || quick) {
            // a set's steps, unless given: options narrow a set, whatever their order on the line
            if (!given.contains("--e1-sizes")) {
                e1Sizes = full ? E1_SIZES : E1_QUICK;
            }
            if (!given.contains("--e2-counts")) {
                e2Counts = full ? E2_COUNTS : E2_QUICK;
            }
            if (!given.contains("--e3-payloads")) {
                e3Payloads = E3_PAYLOADS;
            }
            if (!given.contains("--e3-calls")) {
                e3Calls = 2000;
            }
            if (!given.contains("--profile")) {
                profiles = new ArrayList<>(Arrays.asList(NodeProcess.DEFAULT, NodeProcess.TUNED));
            }
        }
        if (full) {
            if (!given.contains("--e4-nodes")) {
                e4Nodes = new int[] {2, 4, 8};
            }
            if (!given.contains("--e4-modes")) {
                e4Modes = Arrays.asList("n-n", "1-n");
            }
            if (!heapGiven) {
                heap = "6g";
            }
        }
        if (full && !experimentsGiven) {
            experiments.clear();
            experiments.addAll(Arrays.asList("e1", "e2", "e3", "e4", "threads"));
        }
        for (String t : transports) {
            if (!Profiles.isKnown(t)) {
                throw new UsageException("--transports: unknown transport '" + t + "'; known: "
                        + String.join(",", Profiles.ALL) + ", or any cache transport + '-sync'");
            }
        }
        return true;
    }

    private static String value(String[] args, int i, String option) throws UsageException {
        if (i >= args.length || args[i].startsWith("--")) {
            throw new UsageException(option + " needs a value");
        }
        return args[i];
    }

    private static List<String> list(String option, String csv) throws UsageException {
        List<String> items = new ArrayList<>();
        for (String item : csv.split(",", -1)) {
            if (item.trim().isEmpty()) {
                throw new UsageException(option + ": empty item in '" + csv + "'");
            }
            items.add(item.trim());
        }
        return items;
    }

    private static List<String> oneOf(String option, List<String> given, List<String> known) throws UsageException {
        for (String g : given) {
            if (!known.contains(g)) {
                throw new UsageException(option + ": unknown value '" + g + "'; one or more of: "
                        + String.join(",", known));
            }
        }
        return given;
    }

    static int number(String option, String text, int min, int max) throws UsageException {
        int n;
        try {
            n = Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new UsageException(option + ": '" + text + "' is not a whole number");
        }
        if (n < min || n > max) {
            throw new UsageException(option + ": " + n + " is out of range (" + min + " to " + max + ")");
        }
        return n;
    }

    private static int[] ints(String option, String csv, int min, int max) throws UsageException {
        List<String> items = list(option, csv);
        int[] out = new int[items.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = number(option, items.get(i), min, max);
        }
        return out;
    }

    private static String heapSize(String option, String text) throws UsageException {
        if (!text.matches("[1-9][0-9]*[kKmMgG]?")) {
            throw new UsageException(option + ": '" + text + "' is not a heap size (e.g. 1536m, 2g)");
        }
        return text;
    }

    static String usage() {
        return String.join("\n",
                "usage: ./replay [options]",
                "  --transports tcp,raw     transports to run (default: all: " + String.join(",", Profiles.ALL) + ");",
                "                           any cache transport + '-sync' runs E1/E2 with synchronous puts",
                "  --experiments e1,e2,e3   experiments to run (default: e1,e2,e3; also 'e4' for groups and",
                "                           'threads' for the threads-per-region probe: 10/100/1,000 caches)",
                "  (no set)                 a verdict in minutes: E1 at 10240,40960 B, E2 at 40000,160000",
                "                           elements, E3 at payloads 0,4096,16384 x 1000 puts, default profile,",
                "                           every transport but the -sync variants and the JGroups UDP stacks",
                "  --quick                  the quick set: E1 and E2 at 4 steps each, E3 at 6 payloads x 2000",
                "                           puts, under both profiles",
                "  --full                   the full set: all 9 steps of E1 and E2 (heap 6g), E3, E4 with 2, 4 and",
                "                           8 members n-n and 1-n, threads, both profiles (--experiments narrows it)",
                "  --e1-sizes a,b,...       E1 element sizes (--quick: 1280,10240,40960,81920)",
                "  --e2-counts a,b,...      E2 element counts (--quick: 10000,40000,160000,320000)",
                "  --e1-count n             elements per E1 step (default 10000)",
                "  --e3-payloads a,b,...    E3 payload sizes (--quick and --full: 0,1024,2048,4096,8192,16384)",
                "  --e3-calls n             synchronous puts per E3 payload (default 1000; 2000 in the sets)",
                "  --e4-nodes 4             E4 group sizes, comma-separated (default 4; E4 runs with --experiments e4)",
                "  --e4-modes n-n,1-n       E4: every member writes, or member 0 writes (default n-n)",
                "  --e4-sizes 1024,...      E4 message sizes (default 1024,10240,102400)",
                "  --e4-count n             E4 elements each writer puts (default: ~64 MB, 500 to 20,000)",
                "  --e4-heap 1536m          -Xms/-Xmx of each E4 member (default 1536m)",
                "  --heap 2g                heap of each node (default 2g, 6g with --full): -Xmx in the default",
                "                           profile, -Xms and -Xmx in the tuned one",
                "  --profile default        default: the provider's default properties and -Xmx only (what users",
                "                           run); tuned: -Xms = -Xmx, -XX:+AlwaysPreTouch, and the writer's queue",
                "                           blocks (overflowPolicy=block, overflowBlockMillis=600000,",
                "                           queueMaxBytes=8m); both (--quick, --full): every step under each, a",
                "                           report per profile, ratios within each",
                "  --reps n                 repetitions per step; the median is reported (default 1)",
                "  --step-timeout s         a step taking longer is a FAIL (default 600)",
                "  --discovery manual|multicast   how the writer finds the reader (default manual)",
                "  --out dir                where CSV, Markdown and HTML go (default results)",
                "  --render run.csv         run nothing: write the report (Markdown, HTML, charts) of an earlier",
                "                           run's CSV again, next to it (its -threads.csv too, if present)");
    }

    /** One step of the run: what the progress line names, its estimated cost (relative units), what it does. */
}
