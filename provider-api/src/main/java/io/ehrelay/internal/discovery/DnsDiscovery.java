package io.ehrelay.internal.discovery;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Hashtable;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import javax.naming.Context;
import javax.naming.NameNotFoundException;
import javax.naming.NamingEnumeration;
import javax.naming.NamingException;
import javax.naming.directory.Attribute;
import javax.naming.directory.Attributes;
import javax.naming.directory.DirContext;
import javax.naming.directory.InitialDirContext;

import io.ehrelay.spi.Clock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code peerDiscovery=dns}: the peers are what a DNS name answers — A/AAAA records at the configured port, or
 * SRV records of a name starting with {@code _} — looked up again every interval from the system's DNS servers
 * (not the JVM's cache of host names). This node's own address is skipped; a name that does not exist means no
 * peers; a failed lookup keeps the peers found before and is logged at most once a minute. See
 * docs/configuration.md, "DNS discovery". One thread per node. Thread-safe.
 */
public final class DnsDiscovery {

    private static final Logger LOG = LoggerFactory.getLogger(DnsDiscovery.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    /**
     * The system's DNS: SRV records for a name starting with {@code _}, else A and AAAA records, asked of the
     * configured servers every time; the JVM's resolver (hosts file, its cache) where the JDK's DNS provider is
     * missing or DNS does not know the name.
     */
    public static final Resolver SYSTEM = DnsDiscovery::systemLookup;

    /** Where the answers go, and whom they name. */
    private final String name;
    private final int port;
    private final long intervalMillis;
    private final Resolver resolver;
    private final PeerDirectory directory;
    private final BiFunction<String, Integer, String> endpointAt;
    private final ThreadFactory threads;
    private volatile boolean running;
    private Thread thread;
    private final Clock clock;
    private long lastWarnNanos;
    private volatile List<String> last = Collections.emptyList();

    /**
     * @param port       the peers' port for A/AAAA answers (the configured {@code dnsPort}, else this node's own)
     * @param endpointAt the transport's endpoint of a peer at a host and port ({@code Transport.endpointAt})
     */
    public DnsDiscovery(String name, int port, long intervalMillis, Resolver resolver, PeerDirectory directory,
                        BiFunction<String, Integer, String> endpointAt, ThreadFactory threads, Clock clock) {
        this.name = name;
        this.port = port;
        this.intervalMillis = intervalMillis;
        this.resolver = resolver;
        this.directory = directory;
        this.endpointAt = endpointAt;
        this.threads = threads;
        this.clock = clock;
        this.lastWarnNanos = clock.nanoTime() - WARN_EVERY_NANOS;
    }

    /** One answer: a host (an address, or a name from an SRV record) and its port (0: none given). */
    public static final class Target {
        final String host;
        final int port;

        public Target(String host, int port) {
            this.host = host;
            this.port = port;
        }

        @Override
        public String toString() {
            return host + (port > 0 ? ":" + port : "");
        }
    }

    /** The name exists nowhere (NXDOMAIN): no member is up. */
    public static final class NoSuchName extends IOException {
        public NoSuchName(String name) {
            super("no such DNS name: " + name);
        }
    }

    /** How a name is looked up: the system's DNS ({@link #SYSTEM}), or a test's. */
    @FunctionalInterface
    public interface Resolver {
        /** @throws NoSuchName when the name does not exist; another IOException when the lookup failed */
        List<Target> resolve(String name) throws IOException;
    }

    /** Looks the name up once now (so that the peers are known when the node's start returns), then every interval. */
    public void start(int ownPort) {
        lookUp(ownPort);
        running = true;
        thread = threads.newThread(() -> {
            while (running) {
                try {
                    Thread.sleep(intervalMillis);
                } catch (InterruptedException e) {
                    return;
                }
                if (running) {
                    lookUp(ownPort);
                }
            }
        });
        thread.start();
    }

    public void stop() {
        running = false;
        Thread t = thread;
        if (t != null) {
            t.interrupt();
        }
    }

    /** One lookup: the directory's DNS peers become what the name answers now (or stay, when it failed). */
    void lookUp(int ownPort) {
        List<Target> answer;
        try {
            answer = resolver.resolve(name);
        } catch (NoSuchName e) {
            answer = Collections.emptyList();
        } catch (IOException | RuntimeException e) {
            long now = clock.nanoTime();
            if (now - lastWarnNanos >= WARN_EVERY_NANOS) {
                lastWarnNanos = now;
                LOG.warn("ehrelay: could not look up the DNS name {} of peerDiscovery=dns ({}); the {} peers it "
                        + "named before stay listed; trying again every {} ms", name, e.toString(), last.size(),
                        intervalMillis);
            }
            return;
        }
        Set<String> endpoints = new LinkedHashSet<>();
        for (Target t : answer) {
            int p = t.port > 0 ? t.port : port > 0 ? port : ownPort;
            if (p <= 0 || p == ownPort && isThisHost(t.host)) {
                continue;
            }
            endpoints.add(endpointAt.apply(t.host, p));
        }
        List<String> now = Collections.unmodifiableList(new ArrayList<>(endpoints));
        if (!now.equals(last)) {
            LOG.info("ehrelay: DNS name {} now names {} peer(s): {}", name, now.size(), now);
            last = now;
        }
        directory.replaceResolved(now);
    }

    /** Whether {@code host} is an address of this machine (a name is resolved first). */
    static boolean isThisHost(String host) {
        try {
            InetAddress a = InetAddress.getByName(host);
            return a.isAnyLocalAddress() || a.isLoopbackAddress() || NetworkInterface.getByInetAddress(a) != null;
        } catch (UnknownHostException | SocketException e) {
            return false;
        }
    }

    private static List<Target> systemLookup(String name) throws IOException {
        boolean srv = name.startsWith("_");
        List<Target> out = new ArrayList<>();
        Exception failed = null;
        try {
            Hashtable<String, String> env = new Hashtable<>();
            env.put(Context.INITIAL_CONTEXT_FACTORY, "com.sun.jndi.dns.DnsContextFactory");
            env.put(Context.PROVIDER_URL, "dns:");
            env.put("com.sun.jndi.dns.timeout.initial", "1000");
            env.put("com.sun.jndi.dns.timeout.retries", "2");
            DirContext ctx = new InitialDirContext(env);
            try {
                // one query per record type (a query for several types at once is an ANY query, which some
                // servers, Docker's embedded one among them, do not answer themselves)
                for (String type : srv ? new String[] {"SRV"} : new String[] {"A", "AAAA"}) {
                    Attribute a;
                    try {
                        Attributes attrs = ctx.getAttributes(name, new String[] {type});
                        a = attrs.get(type);
                    } catch (NameNotFoundException e) {
                        if (out.isEmpty()) {
                            throw e;
                        }
                        continue;
                    }
                    if (a == null) {
                        continue;
                    }
                    NamingEnumeration<?> values = a.getAll();
                    while (values.hasMore()) {
                        String v = String.valueOf(values.next()).trim();
                        if (srv) {
                            // priority weight port target
                            String[] f = v.split("\\s+");
                            if (f.length == 4) {
                                String target = f[3].endsWith(".") ? f[3].substring(0, f[3].length() - 1) : f[3];
                                out.add(new Target(target, Integer.parseInt(f[2])));
                            }
                        } else {
                            out.add(new Target(v, 0));
                        }
                    }
                }
            } finally {
                ctx.close();
            }
            if (!out.isEmpty() || srv) {
                return out;
            }
        } catch (NameNotFoundException e) {
            if (srv) {
                throw new NoSuchName(name);
            }
            // not in DNS: perhaps in the hosts file, below
        } catch (NamingException | NumberFormatException e) {
            if (srv) {
                throw new IOException(e.toString(), e);
            }
            failed = e; // no DNS provider, or the lookup failed: the JVM's resolver, below
        }
        try {
            for (InetAddress a : InetAddress.getAllByName(name)) {
                out.add(new Target(a.getHostAddress(), 0));
            }
            return out;
        } catch (UnknownHostException e) {
            if (failed != null) {
                // not known to be absent: the DNS lookup failed (a timeout, a server failure)
                throw new IOException(failed.toString(), failed);
            }
            throw new NoSuchName(name);
        }
    }
}
