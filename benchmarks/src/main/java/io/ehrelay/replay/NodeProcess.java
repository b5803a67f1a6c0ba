package io.ehrelay.replay;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import io.ehrelay.testing.NetNamespace;
import io.ehrelay.testing.SocketAudit;

/** A {@link ReplayNode} JVM started by the harness, and the line protocol to it. */
final class NodeProcess implements AutoCloseable {

    /** The replay profile of the JVMs started next. */
    static final String TUNED = "tuned";
    static final String DEFAULT = "default";
    static volatile String profile = TUNED;

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final String label;
    private volatile String failure;

    private NodeProcess(String label, Process process) {
        this.label = label;
        this.process = process;
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (line.startsWith("ERROR")) {
                        failure = line.substring(5).trim();
                    }
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add("ERROR " + e);
            }
            if (failure == null) {
                failure = "exited";
            }
            lines.add("EOF");
        }, "replay-pump-" + label);
        pump.setDaemon(true);
        pump.start();
    }

    /**
     * The harness's class path; for the old JGroups module, without JGroups 5 and ehrelay's JGroups transport and
     * with JGroups 3.6 and {@code ehcache-jgroupsreplication} 1.7 from {@code target/lib-jgroups3} instead.
     */
    static String classPath(List<String> args) throws IOException {
        String own = System.getProperty("java.class.path");
        if (!args.contains("transport=" + Profiles.STOCK_JGROUPS) && !args.contains("transport=" + Profiles.STOCK_JGROUPS_UDP)) {
            return own;
        }
        List<String> entries = new ArrayList<>();
        Path lib = null;
        for (String e : own.split(File.pathSeparator)) {
            String name = Path.of(e).getFileName() == null ? e : Path.of(e).getFileName().toString();
            if (name.startsWith("jgroups-") || name.startsWith("ehrelay-provider-jgroups")) {
                lib = Path.of(e).getParent();
                continue;
            }
            entries.add(e);
        }
        Path old = lib == null ? null : lib.resolveSibling("lib-jgroups3");
        if (old == null || !Files.isDirectory(old)) {
            old = Path.of("target", "lib-jgroups3").toAbsolutePath(); // integration-tests' tests
        }
        if (!Files.isDirectory(old)) {
            throw new IOException("no JGroups 3 class path for the old module (" + old + "); build with ./mvnw install");
        }
        try (Stream<Path> jars = Files.list(old)) {
            jars.filter(p -> p.toString().endsWith(".jar")).sorted().forEach(p -> entries.add(p.toString()));
        }
        return String.join(File.pathSeparator, entries);
    }

    static NodeProcess start(String label, String heap, List<String> args, Path log) throws IOException {
        return start(label, heap, ReplayNode.class, args, log);
    }

    static NodeProcess start(String label, String heap, Class<?> main, List<String> args, Path log)
            throws IOException {
        return start(label, heap, main, args, log, null, "127.0.0.1");
    }

    /**
     * A node in network namespace {@code ns} (another "host", made by the test; {@code null}: this one), whose
     * RMI stubs name {@code host}, its address there.
     */
    static NodeProcess start(String label, String heap, Class<?> main, List<String> args, Path log, NetNamespace ns,
                             String host) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (TUNED.equals(profile)) {
            cmd.add("-Xms" + heap);
            cmd.add("-Xmx" + heap);
            // touch the whole heap at start: first-touch page faults otherwise dominate the timed window
            cmd.add("-XX:+AlwaysPreTouch");
        } else {
            cmd.add("-Xmx" + heap); // what users run: the heap's ceiling, nothing else
        }
        cmd.add("-D" + Profiles.PROFILE_PROPERTY + "=" + profile);
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        cmd.add("-Djava.rmi.server.hostname=" + host);
        if (args.contains("transport=" + Profiles.STOCK_JGROUPS_UDP)) {
            // JGroups 3's UDP does not form a view on a dual-stack JVM bound to 127.0.0.1 (its docs ask for this)
            cmd.add("-Djava.net.preferIPv4Stack=true");
        }
        String extra = System.getenv("EHRELAY_REPLAY_JVM_OPTS");
        if (extra != null && !extra.isBlank()) {
            cmd.addAll(List.of(extra.trim().replace("{label}", label).split("\\s+")));
        }
        cmd.add("-cp");
        cmd.add(classPath(args));
        cmd.add(main.getName());
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(ns == null ? cmd : ns.exec(cmd))
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        return new NodeProcess(label, pb.start());
    }

    /**
     * Waits for a line starting with {@code prefix}; other lines go to {@code other}. Throws when the node
     * reports an error, exits, or the deadline passes.
     */
    String expect(String prefix, long deadlineNanos, Consumer<String> other, NodeProcess... watched)
            throws Exception {
        while (true) {
            long left = deadlineNanos - System.nanoTime();
            String line = left <= 0 ? null : lines.poll(Math.min(left, 200_000_000L), TimeUnit.NANOSECONDS);
            if (line == null) {
                for (NodeProcess w : watched) {
                    if (w != null && w.failure != null) {
                        throw new StepFailure(w.label + " failed while waiting for " + label + ": " + w.failure);
                    }
                }
                if (System.nanoTime() - deadlineNanos >= 0) {
                    throw new StepFailure("timeout waiting for " + label + " " + prefix.trim());
                }
                continue;
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("ERROR")) {
                throw new StepFailure(label + ": " + line.substring(5).trim());
            }
            if (line.equals("EOF")) {
                throw new StepFailure(label + " exited (code " + waitExit() + ")");
            }
            other.accept(line);
        }
    }

    private int waitExit() throws InterruptedException {
        return process.waitFor(5, TimeUnit.SECONDS) ? process.exitValue() : -1;
    }

    void send(String line) {
        try {
            stdin.write(line + "\n");
            stdin.flush();
        } catch (IOException e) {
            // the node is gone; close() reports nothing more
        }
    }

    /** kill -9: the process ends at once, without shutting anything down. */
    void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    /** Sends a signal ({@code STOP}: frozen, as a paused container; {@code CONT}: resumes). */
    void signal(String name) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("kill -" + name + " " + process.pid() + " failed");
        }
    }

    /**
     * The network rule, checked on the running node: every socket it listens on is on loopback, and its namespace
     * has joined no multicast group on another interface since {@code before} was taken.
     *
     * @throws StepFailure naming what the node opened beyond loopback
     */
    void checkListeners(SocketAudit before) throws StepFailure, IOException {
        if (!SocketAudit.available()) {
            return; // not Linux: nothing to read
        }
        List<String> violations = SocketAudit.of(process.pid()).violations(before);
        if (!violations.isEmpty()) {
            throw new StepFailure(label + " opened sockets beyond loopback: " + String.join("; ", violations));
        }
    }

    /**
     * Whether a thread whose stack (as text, innermost frame first) is {@code stack} waits for work: a pool's idle
     * worker, a selector or acceptor, a timer, an RMI connection waiting for its next call. For the busy-thread
     * dumps of failure messages.
     */
    static boolean waitsForWork(String stack) {
        return stack.contains("ThreadPoolExecutor.getTask") || stack.contains("SelectorImpl.select")
                || stack.contains("accept") || stack.contains("ScheduledThreadPoolExecutor$DelayedWorkQueue")
                || stack.contains("TCPTransport.handleMessages") && !stack.contains("UnicastServerRef");
    }

    /**
     * For a failure's message: the node's ehrelay and RMI threads that are not idle (not waiting for work in a
     * pool, a selector or an accept), up to 14 frames each, from {@code jcmd Thread.print}; what went wrong when
     * it cannot be taken.
     */
    String busyThreads() {
        try {
            Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(process.pid()), "Thread.print")
                    .redirectErrorStream(true).start();
            String dump = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(20, TimeUnit.SECONDS);
            StringBuilder sb = new StringBuilder(label).append("'s busy threads:\n");
            for (String block : dump.split("\n\n")) {
                String first = block.strip();
                int end = first.indexOf('"', 1);
                String name = end < 0 ? "" : first.substring(1, end);
                if (!first.startsWith("\"") || !(name.contains("ehrelay") || name.contains("RMI TCP Connection"))
                        || waitsForWork(first)) {
                    continue;
                }
                String[] lines = first.split("\n");
                for (int i = 0; i < Math.min(lines.length, 16); i++) {
                    sb.append(lines[i]).append('\n');
                }
            }
            return sb.toString();
        } catch (IOException e) {
            return label + ": no thread dump (" + e + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return label + ": no thread dump (interrupted)";
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    @Override
    public void close() {
        send("EXIT");
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** A step that did not complete: the reason goes into the table as FAIL(reason). */
    static final class StepFailure extends Exception {
        private static final long serialVersionUID = 1L;

        StepFailure(String message) {
            super(message);
        }
    }
}
