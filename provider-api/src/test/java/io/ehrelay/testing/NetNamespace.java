package io.ehrelay.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A Linux network namespace a test creates for itself (as root, with {@code ip netns}), so that a process can run
 * on "another host": its own loopback, interfaces and addresses, and no route to the machine's network. Removed by
 * {@link #close()}. Interfaces are added inside it only: an {@link #innerInterface} (nothing it sends leaves the namespace)
 * or a {@link #link veth pair} between two such namespaces.
 */
public final class NetNamespace implements AutoCloseable {

    private final String name;

    private NetNamespace(String name) {
        this.name = name;
    }

    /**
     * Whether this process may create namespaces: root, with {@code ip} on the path. Tests that need one fail in CI
     * (the environment variable {@code CI} set) when it is missing, and are skipped, saying so, elsewhere.
     */
    public static boolean available() {
        try {
            String uid = run(false, "id", "-u");
            return uid != null && uid.trim().equals("0") && run(false, "ip", "netns", "list") != null;
        } catch (IOException e) {
            return false;
        }
    }

    /** Why namespaces are not available here, for the test's skip or failure message. */
    public static String unavailableReason() {
        return "network namespaces need root and iproute2 ('ip netns'); CI runs as root";
    }

    /** A new namespace with its loopback up. */
    public static NetNamespace create(String prefix) throws IOException {
        String name = prefix + "-" + ProcessHandle.current().pid() + "-"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));
        run(true, "ip", "netns", "add", name);
        NetNamespace ns = new NetNamespace(name);
        try {
            ns.ip("link", "set", "lo", "up");
        } catch (IOException e) {
            ns.close();
            throw e;
        }
        return ns;
    }

    public String name() {
        return name;
    }

    /**
     * A non-loopback interface {@code device} with {@code cidr} (e.g. {@code 198.18.42.1/24}, an address of the
     * benchmarking range that no network of this machine uses): one end of a veth pair whose other end
     * ({@code device + "p"}) is in the same namespace, so that nothing sent on it leaves the namespace.
     */
    public NetNamespace innerInterface(String device, String cidr) throws IOException {
        ip("link", "add", device, "type", "veth", "peer", "name", device + "p");
        ip("addr", "add", cidr, "dev", device);
        ip("link", "set", device + "p", "up");
        ip("link", "set", device, "up");
        return this;
    }

    /** A veth pair between two namespaces, {@code cidrA} on this side and {@code cidrB} on the other. */
    public void link(String device, String cidrA, NetNamespace other, String otherDevice, String cidrB)
            throws IOException {
        ip("link", "add", device, "type", "veth", "peer", "name", otherDevice, "netns", other.name);
        ip("addr", "add", cidrA, "dev", device);
        ip("link", "set", device, "up");
        other.ip("addr", "add", cidrB, "dev", otherDevice);
        other.ip("link", "set", otherDevice, "up");
    }

    /** {@code ip -n NAME args...}. */
    public String ip(String... args) throws IOException {
        List<String> cmd = new ArrayList<>(Arrays.asList("ip", "-n", name));
        cmd.addAll(Arrays.asList(args));
        return run(true, cmd.toArray(new String[0]));
    }

    /** A command line that runs {@code command} inside this namespace. */
    public List<String> exec(List<String> command) {
        List<String> cmd = new ArrayList<>(Arrays.asList("ip", "netns", "exec", name));
        cmd.addAll(command);
        return cmd;
    }

    @Override
    public void close() throws IOException {
        run(true, "ip", "netns", "del", name);
    }

    private static String run(boolean check, String... cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out;
        try {
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", cmd) + ": no answer in 30 s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", cmd) + ": interrupted", e);
        }
        if (p.exitValue() != 0) {
            if (check) {
                throw new IOException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out.trim());
            }
            return null;
        }
        return out;
    }
}
