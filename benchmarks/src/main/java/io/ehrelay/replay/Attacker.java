package io.ehrelay.replay;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.rmi.NotBoundException;
import java.rmi.Remote;
import java.rmi.RemoteException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import com.codahale.metrics.Meter;
import io.ehrelay.internal.codec.SetBombs;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.metrics.ObjectNames;
import io.ehrelay.provider.Ehrelay;
import io.ehrelay.rmi.RelayRemote;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import net.sf.ehcache.distribution.CachePeer;
import org.jgroups.EmptyMessage;
import org.jgroups.Message;
import org.jgroups.auth.AuthToken;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.AUTH;
import org.jgroups.protocols.AuthHeader;
import org.jgroups.protocols.PingHeader;
import org.jgroups.protocols.TCPPING;
import org.jgroups.util.UUID;
import org.jgroups.util.Util;

/**
 * One attack of the attacker suite, as its own process on this host: {@code key=value} arguments
 * {@code transport}, {@code attack}, {@code ports} (the two honest nodes' ports), {@code secret} (the honest
 * cluster's, for attacks by a peer that holds it), {@code marker} (a file a gadget would create). Says
 * {@code RESULT key=value …} lines, then {@code DONE}; the holding attacks say {@code HOLDING n} and wait for
 * {@code RELEASE} on stdin. Every loop is bounded; everything goes to 127.0.0.1, or with {@code hosts} (the two honest
 * nodes' addresses and the attacker's own, each a network namespace the suite made) to the first honest node.
 * <ul>
 * <li>{@code outsider}: a node of the same transport with another secret asks the honest nodes for their state
 *     (its bootstrap), then puts, removes and clears; RMI also calls the stock {@code CachePeer} bindings.</li>
 * <li>{@code registry} (RMI): binds a gadget, rebinds the cache's binding to its own stub, unbinds the relay.</li>
 * <li>{@code bomb}: a peer holding the secret puts a 1.7 KB nested-set bomb (depth 25).</li>
 * <li>{@code stockbomb} (RMI): a host the node admits without authentication ({@code unauthenticatedPeers})
 *     calls the stock {@code CachePeer}'s {@code put} three times with a depth-27 nested-set bomb, then once
 *     with an honest element.</li>
 * <li>{@code idle}: 2,000 connections that send nothing, to every port the node listens on.</li>
 * <li>{@code slowheaders} (Hessian): 2,000 connections that each send half a request's headers, then nothing.</li>
 * <li>{@code frames}: 8 connections each announcing a 60 MB frame and sending 16 MB of it — TCP: authenticated
 *     connections; RMI: relay batches under sessions; Hessian: request bodies under a session. JGroups: raw
 *     connections to the member port (no member needed there), 40 of them each sending a well-formed message
 *     whose payload is 7 MB (under the shipped stack's max_length), cut after 4 MB of it.</li>
 * <li>{@code tiny}: 1,000,000 tiny frames on one connection — TCP: malformed event frames after authenticating;
 *     RMI: JRMP pings (no session needed); Hessian: challenge calls pipelined (the smallest call served
 *     without a session; at most 10 s); JGroups: 3-byte messages of an unknown version.</li>
 * <li>{@code senders} (RMI, Hessian): a peer holding the secret opens 2,000 sessions under as many names and
 *     posts a batch under each (for a cache the nodes do not have, so the honest data stays as it is).</li>
 * </ul>
 */
public final class Attacker {

    /** The honest nodes' addresses and the attacker's own ({@code hosts}); all 127.0.0.1 by default. */
    private static String[] hosts = {"127.0.0.1", "127.0.0.1", "127.0.0.1"};

    /** Set in the attacker's own process, where making a {@link Canary} to send is no finding. */
    private static volatile boolean attacking;

    private Attacker() {
    }

    /** A remote object whose deserialization leaves a file behind: it must never happen on a node. */
    public static final class Gadget implements Remote, Serializable {
        private static final long serialVersionUID = 1L;
        private final String marker;

        Gadget(String marker) {
            this.marker = marker;
        }

        private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
            in.defaultReadObject();
            Files.write(Paths.get(marker), "gadget ran".getBytes(StandardCharsets.UTF_8));
        }
    }

    /** Where the attacks go: the first honest node's address. */
    public static String target() {
        return hosts[0];
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = ReplayNode.keyValues(argv);
        if (a.containsKey("hosts")) {
            hosts = a.get("hosts").split(",");
        }
        String transport = a.get("transport");
        int[] ports = ReplayNode.ports(a.get("ports"));
        try {
            switch (a.get("attack")) {
                case "outsider":
                    outsider(transport, ports);
                    break;
                case "registry":
                    registry(ports[0], a.get("marker"));
                    break;
                case "bomb":
                    bomb(transport, ports, a.get("secret"));
                    break;
                case "stockbomb":
                    stockBomb(ports[0]);
                    break;
                case "slowheaders":
                    ConnectionAttacks.slowHeaders(ports[0], 2000);
                    break;
                case "idle":
                    ConnectionAttacks.idle(transport, ports[0], 2000);
                    break;
                case "frames":
                    ConnectionAttacks.frames(transport, ports[0], a.get("secret"));
                    break;
                case "tiny":
                    ConnectionAttacks.tiny(transport, ports[0], a.get("secret"));
                    break;
                case "senders":
                    ConnectionAttacks.senders(transport, ports[0], a.get("secret"), 2000);
                    break;
                default:
                    throw new IllegalArgumentException("unknown attack " + a.get("attack"));
            }
            ReplayNode.say("DONE");
        } catch (Exception | Error e) {
            ReplayNode.say("ERROR " + e);
            e.printStackTrace();
        }
        System.exit(0);
    }

    /** A node of the honest pair's transport and group, third of three, with these provider settings. */
    private static CacheManager node(String transport, int[] ports, String settings) throws IOException {
        int own = portAbove(Math.max(ports[0], ports[1]));
        int[] all = {ports[0], ports[1], own};
        String xml = Profiles.faultXml(transport, "attacker-" + ProcessHandle.current().pid(), 2, all, all, settings,
                hosts);
        return new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    /**
     * A free port above {@code floor}. A JGroups group is named after its lowest port ({@link Profiles}): an
     * attacker's port below the honest ones' put it in a group of its own, and it never met them (a random free
     * port, tried up to 100 times, left that to chance when the honest ports were near the top of the range).
     */
    private static int portAbove(int floor) throws IOException {
        for (int p = floor + 1; p <= 65_535; p++) {
            try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
                return s.getLocalPort();
            } catch (IOException taken) {
                // the next one
            }
        }
        throw new IllegalStateException("no free port above " + floor + " for the attacker's node");
    }

    private static void outsider(String transport, int[] ports) throws Exception {
        CacheManager cm = node(transport, ports, "clusterSecret=an-outsider-guesses-wrong");
        try {
            // its bootstrap asked the honest nodes for their state: what did it get?
            ReplayNode.say("RESULT read=" + cm.getCache("replay").getSize());
            ReplicationNode node = ReplicationNode.all(cm).get(0);
            node.replication().resyncFrom(node.peers().isEmpty() ? target() + ":" + ports[0] : node.peers().get(0).endpoint());
            Thread.sleep(1000);
            ReplayNode.say("RESULT reread=" + cm.getCache("replay").getSize());
            for (int i = 0; i < 100; i++) {
                cm.getCache("replay").put(new Element("evil-" + i, "outsider"));
            }
            for (int i = 0; i < 100; i++) {
                cm.getCache("replay").remove("k" + i);
            }
            cm.getCache("replay").removeAll();
            Thread.sleep(2000);
            ReplayNode.say("RESULT members=" + node.peers().size());
        } finally {
            cm.shutdown();
        }
        if ("rmi".equals(transport)) {
            Registry registry = LocateRegistry.getRegistry(target(), ports[0]);
            CachePeer stock = (CachePeer) registry.lookup("replay");
            int refused = 0;
            for (ThrowingCall c : new ThrowingCall[] {() -> stock.put(new Element("evil-stock", "v")),
                    () -> stock.remove("k1"), stock::removeAll, stock::getKeys, () -> stock.getQuiet("k1")}) {
                try {
                    c.call();
                } catch (RemoteException e) {
                    refused++;
                }
            }
            ReplayNode.say("RESULT stockRefused=" + refused + " of 5");
            // arguments the JDK would decode before any check: a class the allow-list refuses (which cleared the
            // cache), a nested-set bomb (seconds of CPU per call)
            int hostile = 0;
            long t0 = System.nanoTime();
            for (ThrowingCall c : new ThrowingCall[] {
                    () -> stock.put(new Element("evil-refused", new LongAdder())),
                    () -> stock.put(new Element("evil-bomb", SetBombs.bomb(27)))}) {
                try {
                    c.call();
                } catch (RemoteException e) {
                    hostile++;
                }
            }
            ReplayNode.say("RESULT stockHostileRefused=" + hostile + " stockHostileMillis="
                    + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        }
        if ("jgroups".equals(transport)) {
            ReplayNode.say("RESULT authHeadersSent=" + authHeaders(ports[0], 5));
        }
    }

    /**
     * A class an outsider names in a JGroups AUTH header: says so on standard error (the node's log) when a node
     * constructs it, as a gadget's constructor would run there.
     */
    public static final class Canary extends AuthToken {
        public Canary() {
            if (!attacking) {
                System.err.println("CANARY CONSTRUCTED in " + ProcessHandle.current().pid());
            }
        }

        @Override
        public String getName() {
            return "canary";
        }

        @Override
        public int size() {
            return 0;
        }

        @Override
        public boolean authenticate(AuthToken token, Message msg) {
            return false;
        }

        @Override
        public void writeTo(DataOutput out) {
        }

        @Override
        public void readFrom(DataInput in) {
        }
    }

    /** Discovery requests carrying an AUTH header that names {@link Canary}, on one raw connection. */
    private static int authHeaders(int port, int count) throws Exception {
        attacking = true;
        short ping = ClassConfigurator.getProtocolId(TCPPING.class);
        short auth = ClassConfigurator.getProtocolId(AUTH.class);
        int sent = 0;
        try (Socket s = ConnectionAttacks.jgroupsConnection(port, 3997)) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            for (int i = 0; i < count; i++) {
                EmptyMessage m = new EmptyMessage(null);
                m.setSrc(UUID.randomUUID());
                m.putHeader(ping, new PingHeader(PingHeader.GET_MBRS_REQ)
                        .clusterName("any"));
                m.putHeader(auth, new AuthHeader(new Canary()));
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                Util.writeMessage(m, new DataOutputStream(b), true);
                out.writeInt(b.size());
                b.writeTo(out);
                out.flush();
                sent++;
            }
            Thread.sleep(1000); // for the node to read them before the connection closes
        }
        return sent;
    }

    private interface ThrowingCall {
        void call() throws Exception;
    }

    private static void registry(int port, String marker) throws Exception {
        Registry registry = LocateRegistry.getRegistry(target(), port);
        Remote relay = registry.lookup(RelayRemote.BINDING);
        Remote peer = registry.lookup("replay");
        int refused = 0;
        for (ThrowingCall c : new ThrowingCall[] {() -> registry.bind("intruder", new Gadget(marker)),
                () -> registry.rebind("replay", new Gadget(marker))}) {
            try {
                c.call();
            } catch (RemoteException e) {
                refused++;
            }
        }
        ReplayNode.say("RESULT gadgetRefused=" + refused + " of 2");
        // a stub passes the JDK's filter: the node must put its own bindings back (from another host, the JDK's
        // registry refuses to change bindings at all)
        boolean rebindRefused = false;
        try {
            registry.rebind("replay", relay);
            registry.unbind(RelayRemote.BINDING);
        } catch (RemoteException e) {
            rebindRefused = true;
        }
        ReplayNode.say("RESULT stubRebindRefused=" + rebindRefused);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        boolean restored = false;
        while (!restored && System.nanoTime() < deadline) {
            Thread.sleep(100);
            try {
                restored = peer.equals(registry.lookup("replay"))
                        && registry.lookup(RelayRemote.BINDING) != null;
            } catch (NotBoundException e) {
                restored = false;
            }
        }
        ReplayNode.say("RESULT restored=" + restored);
    }

    private static void stockBomb(int port) throws Exception {
        CachePeer stock = (CachePeer) LocateRegistry.getRegistry(target(), port).lookup("replay");
        int refused = 0;
        long worst = 0;
        for (int i = 0; i < 3; i++) {
            long t0 = System.nanoTime();
            try {
                stock.put(new Element("bomb", (Serializable) SetBombs.bomb(27)));
            } catch (RemoteException e) {
                refused++;
            }
            worst = Math.max(worst, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        }
        stock.put(new Element("stock-honest", "from a listed host"));
        ReplayNode.say("RESULT stockBombsRefused=" + refused + " of 3 worstMillis=" + worst);
    }

    private static void bomb(String transport, int[] ports, String secret) throws Exception {
        // the insider lifts its own bound: it wants to send the bomb, the honest nodes decide what to read
        CacheManager cm = node(transport, ports, "clusterSecret=" + secret + ", maxHashWork=9000000000000000000");
        try {
            ReplicationNode node = ReplicationNode.all(cm).get(0);
            int reachable = FaultNode.awaitReachablePeers(node, 2);
            Meter sent = Ehrelay.metricRegistry(cm).getMeters().get(
                    ObjectNames.cacheMetric(cm.getName(), node.metrics().transport(), "replay", "sent"));
            // until both honest nodes were handed it (at most twice, 10 s each): a send that went nowhere would
            // leave the suite nothing to measure
            int puts = 0;
            long until = 0;
            while (sent == null || sent.getCount() < 2) {
                if (System.nanoTime() - until >= 0) {
                    if (puts == 2) {
                        break;
                    }
                    cm.getCache("replay").put(new Element("bomb", (Serializable) SetBombs.bomb(25)));
                    puts++;
                    until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                }
                Thread.sleep(50);
            }
            Thread.sleep(1000);
            ReplayNode.say("RESULT reachable=" + reachable + " puts=" + puts + " handedToPeers="
                    + (sent == null ? "?" : sent.getCount()));
        } finally {
            cm.shutdown();
        }
    }
}
