package io.ehrelay.replay;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import io.ehrelay.testing.SocketAudit;

/**
 * The replay's steps, each between fresh node processes: a transfer of E1 or E2 ({@link #transfer}), a group of
 * E4 ({@link #group}) and E3's latencies ({@link #latency}), each the median of the repetitions asked. {@link Replay}
 * plans and runs them.
 */
abstract class ReplaySteps extends ReplayOptions {

    /** The progress line; silent until {@link Replay#run()} starts one (tests call the steps directly). */
    Progress progress = new Progress(new PrintStream(new OutputStream() {
        @Override
        public void write(int b) {
        }
    }), false, 0, 0);
    private String multicastPort;

    interface Step {
        StepResult run() throws Exception;
    }

    StepResult median(Step step) throws Exception {
        List<StepResult> runs = new ArrayList<>();
        for (int i = 0; i < reps; i++) {
            StepResult r = step.run();
            if (!r.ok()) {
                return r;
            }
            runs.add(r);
        }
        runs.sort(Comparator.comparingDouble(r -> r.seconds));
        return runs.get(runs.size() / 2);
    }

    /**
     * The multicast memberships of this machine's namespace before a step's nodes start: each node is checked
     * against them once it is ready ({@link NodeProcess#checkListeners}); {@code null} where {@code /proc} is not
     * readable.
     */
    static SocketAudit listenersBefore() throws IOException {
        return SocketAudit.available() ? SocketAudit.self() : null;
    }

    List<String> nodeArgs(String role, String transport, int count, int size, String mode) {
        // a -sync variant runs its base transport with synchronous puts
        String m = "async".equals(mode) && Profiles.isSyncVariant(transport) ? "sync" : mode;
        return new ArrayList<>(Arrays.asList("role=" + role, "transport=" + Profiles.base(transport), "count=" + count,
                "size=" + size, "discovery=" + discoveryArg(), "mode=" + m));
    }

    private String discoveryArg() {
        if (!"multicast".equals(discovery)) {
            return "manual";
        }
        if (multicastPort == null) {
            try {
                multicastPort = Integer.toString(ReplayNode.freePort());
            } catch (IOException e) {
                multicastPort = "45588";
            }
        }
        return "multicast:" + multicastPort;
    }

    StepResult transfer(String experiment, String transport, int count, int size, Path log) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(stepTimeoutSeconds);
        int[] arrived = {0};
        NodeProcess reader = null;
        NodeProcess writer = null;
        try {
            SocketAudit before = listenersBefore();
            reader = NodeProcess.start("reader", heap, nodeArgs("reader", transport, count, size, "async"), log);
            String endpoint = reader.expect("READY", deadline, l -> { }).substring(6).trim();
            List<String> wargs = nodeArgs("writer", transport, count, size, "async");
            wargs.add("peer=" + endpoint);
            writer = NodeProcess.start("writer", heap, wargs, log);
            writer.expect("READY", deadline, l -> { }, reader);
            reader.checkListeners(before);
            writer.checkListeners(before);
            // both JVMs warm up on a few thousand elements first; the timed step starts on GO
            reader.expect("WARM", deadline, l -> { }, writer);
            writer.send("GO");
            String[] wrote = writer.expect("WROTE", deadline, l -> { }, reader).split(" ");
            NodeProcess w = writer;
            String[] done = reader.expect("DONE", deadline, l -> {
                if (l.startsWith("PROGRESS")) {
                    arrived[0] = Integer.parseInt(l.substring(9).trim());
                    progress.update(String.format(Locale.ROOT, "%,d of %,d arrived", arrived[0], count));
                }
            }, w).split(" ");
            long firstPut = Long.parseLong(wrote[1]);
            long lastPut = Long.parseLong(wrote[2]);
            long dropped = Long.parseLong(wrote[4]);
            long failed = Long.parseLong(wrote[5]);
            long firstArrival = Long.parseLong(done[1]);
            long lastArrival = Long.parseLong(done[2]);
            int missing = Integer.parseInt(done[3]);
            int bad = Integer.parseInt(done[4]);
            String outcome = missing == 0 && bad == 0 && dropped == 0 ? "ok"
                    : "FAIL(missing " + missing + ", bad " + bad + ", dropped " + dropped + ", failed " + failed + ")";
            StepResult result = new StepResult(experiment, transport, count, size, (lastArrival - firstPut) / 1e6,
                    (lastArrival - firstArrival) / 1e6, Long.parseLong(wrote[3]), Long.parseLong(done[5]), Double.NaN,
                    Double.NaN, Double.NaN, outcome, (lastPut - firstPut) / 1e6);
            // what each process spent from the step's start to the last arrival: CPU and heap allocation
            writer.send("COST");
            String[] wc = writer.expect("COST", deadline, l -> { }, reader).split(" ");
            reader.send("COST");
            String[] rc = reader.expect("COST", deadline, l -> { }, w).split(" ");
            result.writerCpuSeconds = Long.parseLong(wc[1]) < 0 ? Double.NaN : Long.parseLong(wc[1]) / 1e9;
            result.readerCpuSeconds = Long.parseLong(rc[1]) < 0 ? Double.NaN : Long.parseLong(rc[1]) / 1e9;
            result.writerAllocBytes = Long.parseLong(wc[2]);
            result.readerAllocBytes = Long.parseLong(rc[2]);
            result.profile = NodeProcess.profile;
            long loopCpu = wrote.length > 6 ? Long.parseLong(wrote[6]) : -1;
            result.putCpuSeconds = loopCpu < 0 ? Double.NaN : loopCpu / 1e9;
            return result;
        } catch (NodeProcess.StepFailure e) {
            return StepResult.failed(experiment, transport, count, size, e.getMessage() + ", reader had "
                    + arrived[0] + " of " + count);
        } catch (Exception e) {
            return StepResult.failed(experiment, transport, count, size, e.toString());
        } finally {
            if (writer != null) {
                writer.close();
            }
            if (reader != null) {
                reader.close();
            }
        }
    }

    /**
     * E4: a group of {@code nodes} member processes; in {@code n-n} every member puts {@code count} elements of
     * {@code size} bytes, in {@code 1-n} member 0 does. Each receiving member's rate is what it received divided
     * by the time from the first put to its last arrival; the step reports the median member (count = elements
     * each receiving member gets, so elements/s and MB/s are per member).
     */
    StepResult group(String transport, String mode, int nodes, int size, int count, Path log) {
        boolean all = "n-n".equals(mode);
        String experiment = "E4 " + mode + "/" + nodes;
        int perMember = all ? (nodes - 1) * count : count;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(stepTimeoutSeconds);
        List<NodeProcess> members = new ArrayList<>();
        try {
            SocketAudit before = listenersBefore();
            int[] ports = new int[nodes];
            StringBuilder portList = new StringBuilder();
            for (int i = 0; i < nodes; i++) {
                ports[i] = ReplayNode.freePort();
                portList.append(i == 0 ? "" : ",").append(ports[i]);
            }
            for (int i = 0; i < nodes; i++) {
                boolean writes = all || i == 0;
                int expect = all ? perMember : i == 0 ? 0 : count;
                members.add(NodeProcess.start("member" + i, e4Heap, GroupMember.class, new ArrayList<>(Arrays.asList(
                        "transport=" + transport, "index=" + i, "ports=" + portList, "count=" + count,
                        "size=" + size, "writes=" + writes, "expect=" + expect)), log));
            }
            for (NodeProcess m : members) {
                m.expect("READY", deadline, l -> { });
            }
            for (NodeProcess m : members) {
                m.checkListeners(before);
            }
            for (NodeProcess m : members) {
                m.send("GO");
            }
            long go = Long.MAX_VALUE;
            for (NodeProcess m : members) {
                long t = Long.parseLong(m.expect("WROTE", deadline, l -> { }).split(" ")[1]);
                if (t > 0) {
                    go = Math.min(go, t);
                }
            }
            List<Double> seconds = new ArrayList<>();
            for (int i = 0; i < nodes; i++) {
                String[] done = members.get(i).expect("DONE", deadline, l -> { }).split(" ");
                if (!all && i == 0) {
                    continue;
                }
                seconds.add((Long.parseLong(done[2]) - go) / 1e6);
            }
            seconds.sort(Double::compare);
            double median = seconds.get(seconds.size() / 2);
            return new StepResult(experiment, transport, perMember, size, median, Double.NaN, 0, 0, Double.NaN,
                    Double.NaN, Double.NaN, "ok");
        } catch (Exception e) {
            return StepResult.failed(experiment, transport, perMember, size, e.getMessage());
        } finally {
            for (NodeProcess m : members) {
                m.close();
            }
        }
    }

    List<StepResult> latency(String transport, Path log) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(stepTimeoutSeconds);
        List<StepResult> out = new ArrayList<>();
        NodeProcess reader = null;
        NodeProcess writer = null;
        String payloads = Arrays.stream(e3Payloads).mapToObj(Integer::toString).reduce((a, b) -> a + "," + b)
                .orElse("0");
        try {
            SocketAudit before = listenersBefore();
            reader = NodeProcess.start("reader", heap, nodeArgs("reader", transport, Integer.MAX_VALUE, 0, "hold"), log);
            String endpoint = reader.expect("READY", deadline, l -> { }).substring(6).trim();
            List<String> wargs = nodeArgs("writer", transport, 0, 0, "latency");
            wargs.add("peer=" + endpoint);
            wargs.add("payloads=" + payloads);
            wargs.add("calls=" + e3Calls);
            writer = NodeProcess.start("writer", heap, wargs, log);
            writer.expect("READY", deadline, l -> { });
            reader.checkListeners(before);
            writer.checkListeners(before);
            for (int ignored : e3Payloads) {
                String[] lat = writer.expect("LAT", deadline, l -> { }).split(" ");
                double p99 = Double.parseDouble(lat[3]);
                out.add(new StepResult("E3", transport, e3Calls, Integer.parseInt(lat[1]), Double.NaN, Double.NaN, 0,
                        0, Double.parseDouble(lat[2]), p99, Double.parseDouble(lat[4]), "ok"));
            }
        } catch (Exception e) {
            out.add(StepResult.failed("E3", transport, e3Calls, 0, e.getMessage()));
        } finally {
            if (writer != null) {
                writer.close();
            }
            if (reader != null) {
                reader.close();
            }
        }
        return out;
    }
}
