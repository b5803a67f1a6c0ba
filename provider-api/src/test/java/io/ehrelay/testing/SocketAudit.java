package io.ehrelay.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What a process listens on and which multicast groups its network namespace has joined, read from Linux's
 * {@code /proc}: the process's sockets ({@code /proc/PID/fd} links to {@code socket:[inode]}, matched against
 * {@code /proc/PID/net/tcp}, {@code tcp6}, {@code udp}, {@code udp6}) and the namespace's memberships
 * ({@code /proc/PID/net/igmp}, {@code igmp6}). {@link #violations} applies the project's network rule: every TCP
 * listener and every UDP socket on loopback (a UDP socket bound to a multicast group counts as that group's), and
 * no group joined on an interface other than {@code lo} but those the kernel joins on every interface.
 */
public final class SocketAudit {

    /** A socket of the process: a TCP listener or a UDP socket. */
    public static final class Socket {
        public final String protocol;
        public final InetAddress address;
        public final int port;
        /**
         * The receive queue: for a TCP listener, the connections the kernel completed that the process has not
         * accepted yet; for a UDP socket, the bytes waiting to be read.
         */
        public final int queued;

        Socket(String protocol, InetAddress address, int port, int queued) {
            this.protocol = protocol;
            this.address = address;
            this.port = port;
            this.queued = queued;
        }

        @Override
        public String toString() {
            String host = address.getHostAddress();
            return protocol + " " + (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
        }
    }

    /** A multicast group joined on an interface of the namespace. */
    public static final class Membership {
        public final String device;
        public final InetAddress group;

        Membership(String device, InetAddress group) {
            this.device = device;
            this.group = group;
        }

        /** The groups the kernel joins on every interface: all-hosts, all-nodes and solicited-node addresses. */
        boolean kernelDefault() {
            byte[] b = group.getAddress();
            if (b.length == 4) {
                return group.getHostAddress().equals("224.0.0.1");
            }
            boolean allNodes = (b[0] == (byte) 0xff) && (b[1] == 1 || b[1] == 2) && b[15] == 1 && zero(b, 2, 15);
            boolean solicited = b[0] == (byte) 0xff && b[1] == 2 && zero(b, 2, 11) && b[11] == 1 && b[12] == (byte) 0xff;
            return allNodes || solicited;
        }

        private static boolean zero(byte[] b, int from, int to) {
            for (int i = from; i < to; i++) {
                if (b[i] != 0) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Membership && ((Membership) o).device.equals(device) && ((Membership) o).group.equals(group);
        }

        @Override
        public int hashCode() {
            return device.hashCode() * 31 + group.hashCode();
        }

        @Override
        public String toString() {
            return group.getHostAddress() + " on " + device;
        }
    }

    private final long pid;
    private final List<Socket> sockets;
    private final Set<Membership> memberships;

    SocketAudit(long pid, List<Socket> sockets, Set<Membership> memberships) {
        this.pid = pid;
        this.sockets = sockets;
        this.memberships = memberships;
    }

    /** This JVM. */
    public static SocketAudit self() throws IOException {
        return of(ProcessHandle.current().pid());
    }

    /** Whether {@code /proc} can be read as this class reads it (Linux). */
    public static boolean available() {
        return Files.isReadable(Path.of("/proc/self/net/tcp")) && Files.isDirectory(Path.of("/proc/self/fd"));
    }

    /** The sockets of process {@code pid} and the memberships of its network namespace, now. */
    public static SocketAudit of(long pid) throws IOException {
        Path proc = Path.of("/proc", Long.toString(pid));
        Set<Long> inodes = new HashSet<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(proc.resolve("fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(Long.parseLong(target.substring(8, target.length() - 1)));
                    }
                } catch (IOException e) {
                    // closed while we looked
                }
            }
        }
        List<Socket> sockets = new ArrayList<>();
        for (String table : new String[] {"tcp", "tcp6", "udp", "udp6"}) {
            Path file = proc.resolve("net").resolve(table);
            if (Files.isReadable(file)) {
                sockets.addAll(parseSockets(table.startsWith("tcp") ? "tcp" : "udp", read(file), inodes));
            }
        }
        Set<Membership> memberships = new LinkedHashSet<>();
        Path igmp = proc.resolve("net/igmp");
        if (Files.isReadable(igmp)) {
            memberships.addAll(parseIgmp(read(igmp)));
        }
        Path igmp6 = proc.resolve("net/igmp6");
        if (Files.isReadable(igmp6)) {
            memberships.addAll(parseIgmp6(read(igmp6)));
        }
        return new SocketAudit(pid, sockets, memberships);
    }

    private static String read(Path file) throws IOException {
        return new String(Files.readAllBytes(file), StandardCharsets.US_ASCII);
    }

    /** TCP listeners and UDP sockets of a {@code /proc/net/tcp}-style table whose inode is one of {@code inodes}. */
    static List<Socket> parseSockets(String protocol, String table, Collection<Long> inodes) {
        List<Socket> out = new ArrayList<>();
        String[] lines = table.split("\n");
        for (int i = 1; i < lines.length; i++) {
            String[] f = lines[i].trim().split("\\s+");
            if (f.length < 10) {
                continue;
            }
            boolean listening = f[3].equals("0A");
            if (protocol.equals("tcp") && !listening) {
                continue;
            }
            if (!inodes.contains(Long.parseLong(f[9]))) {
                continue;
            }
            int colon = f[1].indexOf(':');
            out.add(new Socket(protocol, address(f[1].substring(0, colon), true),
                    Integer.parseInt(f[1].substring(colon + 1), 16),
                    Integer.parseInt(f[4].substring(f[4].indexOf(':') + 1), 16)));
        }
        return out;
    }

    /** {@code /proc/net/igmp}: a device line ({@code 4 eth0 : ...}) followed by its group lines. */
    static List<Membership> parseIgmp(String text) {
        List<Membership> out = new ArrayList<>();
        String device = null;
        String[] lines = text.split("\n");
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.trim().split("\\s+");
            if (!Character.isWhitespace(line.charAt(0))) {
                device = f[1];
            } else if (device != null) {
                out.add(new Membership(device, address(f[0], true)));
            }
        }
        return out;
    }

    /** {@code /proc/net/igmp6}: {@code index device group users flags timer}, the group in network order. */
    static List<Membership> parseIgmp6(String text) {
        List<Membership> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 3 && f[2].length() == 32) {
                out.add(new Membership(f[1], address(f[2], false)));
            }
        }
        return out;
    }

    /**
     * An address in {@code /proc}'s hex: IPv4 as one host-order (little-endian) word; IPv6 as four such words in the
     * socket tables ({@code wordsLittleEndian}), in network order in {@code igmp6}.
     */
    static InetAddress address(String hex, boolean wordsLittleEndian) {
        byte[] b = new byte[hex.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        if (wordsLittleEndian) {
            for (int w = 0; w < b.length; w += 4) {
                byte t = b[w];
                b[w] = b[w + 3];
                b[w + 3] = t;
                t = b[w + 1];
                b[w + 1] = b[w + 2];
                b[w + 2] = t;
            }
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an address: " + hex, e);
        }
    }

    public long pid() {
        return pid;
    }

    /** The process's TCP listeners and UDP sockets. */
    public List<Socket> sockets() {
        return sockets;
    }

    /** The namespace's multicast memberships. */
    public Set<Membership> memberships() {
        return memberships;
    }

    /**
     * What breaks the network rule: a TCP listener or UDP socket of the process on an address other than loopback
     * (a UDP socket bound to a multicast group excepted: its memberships are checked instead), and a membership on
     * an interface other than {@code lo} that neither the kernel joins by default nor was there in {@code before}
     * (the namespace's memberships before the process under test started; {@code null}: none).
     */
    public List<String> violations(SocketAudit before) {
        return violations(before, Collections.emptySet());
    }

    /**
     * As {@link #violations(SocketAudit)}, where the process may also listen on the addresses {@code alsoAllowed}
     * (those a node was told to bind, in a namespace of a test's own): never on the wildcard address.
     */
    public List<String> violations(SocketAudit before, Set<InetAddress> alsoAllowed) {
        List<String> out = new ArrayList<>();
        for (Socket s : sockets) {
            if (!s.address.isLoopbackAddress() && !s.address.isMulticastAddress() && !alsoAllowed.contains(s.address)) {
                out.add((s.protocol.equals("tcp") ? "listens on " : "receives on ") + s);
            }
        }
        for (Membership m : memberships) {
            if (!m.device.equals("lo") && !m.kernelDefault()
                    && (before == null || !before.memberships.contains(m))) {
                out.add("joined multicast group " + m);
            }
        }
        return out;
    }

    /** One line each, as {@code ss -lntu} and {@code ip maddr} would show them, for logs and closing notes. */
    public String describe() {
        StringBuilder b = new StringBuilder("pid ").append(pid).append(": sockets ").append(sockets)
                .append("; memberships other than lo's:");
        for (Membership m : memberships) {
            if (!m.device.equals("lo")) {
                b.append(' ').append(m).append(m.kernelDefault() ? " (kernel)" : "").append(';');
            }
        }
        return b.toString();
    }
}
