package io.ehrelay.replay;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.rmi.Remote;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.ehrelay.hessian.HessianAttacks;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.rmi.RelayRemote;
import io.ehrelay.rmi.RmiAttacks;
import io.ehrelay.tcp.TcpAttacks;
import net.sf.ehcache.Element;
import org.jgroups.BytesMessage;
import org.jgroups.Version;
import org.jgroups.stack.IpAddress;
import org.jgroups.util.Util;

/**
 * The attacker suite's attacks on connections (see {@link Attacker} for how a suite runs one): {@code idle},
 * {@code slowheaders}, {@code frames}, {@code tiny} and {@code senders}, each bounded, each to the first honest
 * node only.
 */
final class ConnectionAttacks {

    private ConnectionAttacks() {
    }

    /** The ports a node listens on: its own, and for RMI the port of its exported objects too. */
    private static List<Integer> listening(String transport, int port) throws Exception {
        List<Integer> out = new ArrayList<>();
        out.add(port);
        if ("rmi".equals(transport)) {
            Remote relay = RmiAttacks.relay(port);
            Matcher m = Pattern.compile(Pattern.quote(Attacker.target()) + ":(\\d+)")
                    .matcher(relay.toString());
            if (m.find() && Integer.parseInt(m.group(1)) != port) {
                out.add(Integer.parseInt(m.group(1)));
            }
        }
        return out;
    }

    static void idle(String transport, int port, int count) throws Exception {
        List<Integer> targets = listening(transport, port);
        List<Socket> open = new ArrayList<>();
        int failed = 0;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        try {
            // at most 10 s: a node that stops accepting is bounding them (what it holds is measured meanwhile)
            for (int i = 0; i < count && System.nanoTime() < until; i++) {
                Socket s = new Socket();
                try {
                    s.connect(new InetSocketAddress(Attacker.target(), targets.get(i % targets.size())), 250);
                    open.add(s);
                } catch (IOException e) {
                    failed++;
                    s.close();
                }
            }
            ReplayNode.say("RESULT opened=" + open.size() + " failed=" + failed + " ports="
                    + targets.toString().replace(", ", "+"));
            holdUntilReleased(open.size());
            ReplayNode.say("RESULT closedByNode=" + closedByNode(open));
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    /**
     * Hessian: {@code count} connections that each send the first line and half the headers of a request, then
     * nothing (no secret needed): each holds one of the node's HTTP threads, or waits for one, as long as the node
     * lets it.
     */
    static void slowHeaders(int port, int count) throws Exception {
        List<Socket> open = new ArrayList<>();
        byte[] half = "POST /ehrelay HTTP/1.1\r\nHost: node\r\nContent-Type: application/x-hessian\r\nContent-"
                .getBytes(StandardCharsets.US_ASCII);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int failed = 0;
        try {
            for (int i = 0; i < count && System.nanoTime() < until; i++) {
                Socket s = new Socket();
                try {
                    s.connect(new InetSocketAddress(Attacker.target(), port), 250);
                    s.getOutputStream().write(half);
                    s.getOutputStream().flush();
                    open.add(s);
                } catch (IOException e) {
                    failed++;
                    s.close();
                }
            }
            ReplayNode.say("RESULT opened=" + open.size() + " failed=" + failed);
            holdUntilReleased(open.size());
            ReplayNode.say("RESULT closedByNode=" + closedByNode(open));
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    /** How many of {@code open} the node has closed (each looked at for 1 ms). */
    private static int closedByNode(List<Socket> open) throws IOException {
        int closed = 0;
        for (Socket s : open) {
            s.setSoTimeout(1);
            try {
                if (s.getInputStream().read() == -1) {
                    closed++;
                }
            } catch (SocketTimeoutException e) {
                // still open
            } catch (IOException e) {
                closed++;
            }
        }
        return closed;
    }

    private static void holdUntilReleased(int n) throws IOException {
        ReplayNode.say("HOLDING " + n);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null && !line.trim().equals("RELEASE"); line = in.readLine()) {
            // waiting for the suite to measure the node
        }
    }

    static void frames(String transport, int port, String secret) throws Exception {
        List<Closeable> open = new ArrayList<>();
        List<Thread> writers = new ArrayList<>();
        AtomicLong written = new AtomicLong();
        AtomicInteger refused = new AtomicInteger();
        byte[] sixteen = new byte[16 << 20];
        // Hessian: the first 16 MB of a well-formed post of a 60 MB batch (a body the node starts decoding)
        Object[] hessianPost = "hessian".equals(transport) ? HessianAttacks.postPrefix(
                "http://127.0.0.1:1/ehrelay", 60 << 20, 16 << 20) : null;
        RelayRemote relay = "rmi".equals(transport) ? RmiAttacks.relay(port) : null;
        RpcSessions.Credentials session = "rmi".equals(transport)
                ? RmiAttacks.session(relay, secret, "frames:1")
                : "hessian".equals(transport) ? HessianAttacks.session(
                        "http://" + Attacker.target() + ":" + port + "/ehrelay", secret, "http://127.0.0.1:1/ehrelay") : null;
        // JGroups allocates a message's payload at the length inside the message: 40 connections each send a
        // message whose payload is 7 MB (280 MB, more than the node's heap) and stop 3 MB short of its end;
        // inboundBufferMaxBytes (32 MB) lets 4 be read, the others are closed after 10 s
        boolean jgroups = "jgroups".equals(transport);
        try {
            int connections = jgroups ? 40 : 8;
            byte[] jgroupsMessage = jgroups ? jgroupsFrame(7 << 20) : null;
            for (int i = 0; i < connections; i++) {
                int n = i;
                // each connection writes on its own thread: the node may stop reading when its budget is spent
                Thread w = new Thread(() -> {
                    try {
                        switch (transport) {
                            case "rmi":
                                // the call's own connection: it stalls until this process ends (counted as
                                // handed to the call: it blocks in the middle)
                                written.addAndGet(sixteen.length);
                                RmiAttacks.stalledPost(relay, "frames:1", session.next(), sixteen, 60 << 20,
                                        170_000);
                                break;
                            case "hessian":
                                // (blocks while the node does not read: the socket is closed when this process ends)
                                Socket h = HessianAttacks.partialPost(port, session.next(),
                                        (Integer) hessianPost[0], (byte[]) hessianPost[1]);
                                synchronized (open) {
                                    open.add(h);
                                }
                                written.addAndGet(sixteen.length);
                                break;
                            default:
                                Socket s = "tcp".equals(transport) ? TcpAttacks.insider(port, secret,
                                        "frames-" + n + ":1") : jgroupsConnection(port, 1 + n);
                                synchronized (open) {
                                    open.add(s);
                                }
                                OutputStream out = s.getOutputStream();
                                if (jgroups) {
                                    // a well-formed message whose payload is 7 MB, cut after 4 MB of it
                                    out.write(jgroupsMessage, 0, jgroupsMessage.length - (3 << 20));
                                    written.addAndGet(jgroupsMessage.length - (3 << 20));
                                    out.flush();
                                    return;
                                }
                                out.write(TcpAttacks.eventsHeader(60 << 20));
                                for (int mb = 0; mb < 16; mb++) {
                                    out.write(sixteen, mb << 20, 1 << 20);
                                    written.addAndGet(1 << 20);
                                }
                                out.flush();
                        }
                    } catch (IOException e) {
                        refused.incrementAndGet(); // closed or refused by the node (its bound)
                        if (n == 0) {
                            ReplayNode.say("RESULT firstFailure=" + String.valueOf(e.getMessage()).replace(' ', '_'));
                        }
                    }
                }, "frames-" + i);
                w.setDaemon(true);
                w.start();
                writers.add(w);
            }
            long joinUntil = System.nanoTime() + TimeUnit.SECONDS.toNanos(jgroups ? 15 : 5);
            for (Thread w : writers) {
                w.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(joinUntil - System.nanoTime())));
            }
            ReplayNode.say("RESULT writtenMB=" + (written.get() >> 20) + " failedWriting=" + refused.get());
            holdUntilReleased(writers.size());
        } finally {
            synchronized (open) {
                for (Closeable c : open) {
                    c.close();
                }
            }
        }
    }

    /** A JGroups frame as a member's transport writes it: its length, then a message carrying {@code payload} bytes. */
    private static byte[] jgroupsFrame(int payload) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(payload + 256);
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0);
        Util.writeMessage(new BytesMessage(null, new byte[payload]), out, true);
        byte[] f = bytes.toByteArray();
        ByteBuffer.wrap(f).putInt(0, f.length - 4);
        return f;
    }

    /**
     * A connection to a JGroups TCP member port, past its header (cookie, version, the address's length, an
     * address: 127.0.0.1 and {@code claimedPort}, which no member has).
     */
    static Socket jgroupsConnection(int port, int claimedPort) throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress(Attacker.target(), port), 2000);
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.write(new byte[] {'b', 'e', 'l', 'a'});
        out.writeShort(Version.version);
        try {
            IpAddress claimed = new IpAddress("127.0.0.1", claimedPort);
            out.writeShort(claimed.serializedSize());
            claimed.writeTo(out);
        } catch (Exception e) {
            throw new IOException(e);
        }
        out.flush();
        return s;
    }

    static void senders(String transport, int port, String secret, int count) throws Exception {
        byte[] batch = EventCodec.singletonBatch(
                EventCodec.encodePut("no-such-cache", new Element("k", "v")));
        int posted = 0;
        long t0 = System.nanoTime();
        if ("rmi".equals(transport)) {
            RelayRemote relay = RmiAttacks.relay(port);
            for (int i = 0; i < count; i++) {
                String name = "127.0.0.1:" + (10_000 + i);
                RpcSessions.Credentials session = RmiAttacks.session(relay, secret, name);
                RmiAttacks.post(relay, name, session.next(), batch);
                posted++;
            }
        } else {
            String url = "http://" + Attacker.target() + ":" + port + "/ehrelay";
            for (int i = 0; i < count; i++) {
                String name = "http://127.0.0.1:" + (10_000 + i) + "/ehrelay";
                RpcSessions.Credentials session = HessianAttacks.session(url,
                        secret, name);
                if (HessianAttacks.post(url, session.next(), name, batch) == 200) {
                    posted++;
                }
            }
        }
        ReplayNode.say("RESULT posted=" + posted + " millis=" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
    }

    static void tiny(String transport, int port, String secret) throws Exception {
        long t0 = System.nanoTime();
        switch (transport) {
            case "rmi":
                ReplayNode.say("RESULT sent=1000000 acknowledged=" + RmiAttacks.pings(port, 1_000_000)
                        + " millis=" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                return;
            case "hessian": {
                long[] r = HessianAttacks.challengeFlood(port, 1_000_000, 10_000);
                ReplayNode.say("RESULT sent=" + r[0] + " answeredKB=" + (r[1] >> 10) + " millis="
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
                return;
            }
            default:
                break;
        }
        try (Socket s = "tcp".equals(transport) ? TcpAttacks.insider(port, secret, "tiny:1")
                : jgroupsConnection(port, 1)) {
            OutputStream out = new BufferedOutputStream(s.getOutputStream(), 1 << 16);
            // JGroups: a 3-byte message whose version no member speaks (dropped by the transport)
            byte[] frame = "tcp".equals(transport) ? TcpAttacks.events(new byte[] {1})
                    : new byte[] {0, 0, 0, 3, 0, 0, 0};
            int sent = 0;
            try {
                for (; sent < 1_000_000; sent++) {
                    out.write(frame);
                }
                out.flush();
            } catch (IOException e) {
                ReplayNode.say("RESULT closedAfter=" + sent);
            }
            ReplayNode.say("RESULT sent=" + sent + " millis=" + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        }
    }
}
