package io.ehrelay.internal.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * How a node finds its peers: a manual list, automatic discovery by multicast heartbeat, or a DNS name whose
 * answers are the peers ({@code peerDiscovery=dns}, ehrelay's own: containers and Kubernetes, where multicast does
 * not pass). The property names are the stock ones ({@code peerDiscovery}, {@code multicastGroupAddress},
 * {@code multicastGroupPort}, {@code timeToLive}, {@code hostName}) plus {@code dnsName}, {@code dnsPort} and
 * {@code dnsIntervalMillis}; the manual list's name is the transport's.
 */
public final class DiscoveryConfig {

    public static final String PEER_DISCOVERY = "peerDiscovery";
    public static final String MULTICAST_GROUP_ADDRESS = "multicastGroupAddress";
    public static final String MULTICAST_GROUP_PORT = "multicastGroupPort";
    public static final String TIME_TO_LIVE = "timeToLive";
    public static final String HOST_NAME = "hostName";
    public static final String HEARTBEAT_INTERVAL_MILLIS = "heartbeatIntervalMillis";
    public static final String PEER_TIMEOUT_MILLIS = "peerTimeoutMillis";
    public static final String DNS_NAME = "dnsName";
    public static final String DNS_PORT = "dnsPort";
    public static final String DNS_INTERVAL_MILLIS = "dnsIntervalMillis";
    private static final long DEFAULT_DNS_INTERVAL_MILLIS = 5000;

    /**
     * The two discovery modes of the stock providers; {@code DNS}: the peers are what a DNS name resolves to,
     * looked up again every {@code dnsIntervalMillis}; {@code TRANSPORT}: the transport knows the members itself
     * (e.g. a JGroups view) and reports them through {@link io.ehrelay.spi.TransportContext#setPeers}.
     */
    public enum Mode { MANUAL, AUTOMATIC, DNS, TRANSPORT }

    private final Mode mode;
    private final List<String> manualPeers;
    private final InetAddress groupAddress;
    private final int groupPort;
    private final int timeToLive;
    private final InetAddress multicastInterface;
    private final long heartbeatIntervalMillis;
    private final long peerTimeoutMillis;
    private final String dnsName;
    private final int dnsPort;
    private final long dnsIntervalMillis;

    private DiscoveryConfig(Mode mode, List<String> manualPeers, InetAddress groupAddress, int groupPort,
                            int timeToLive, InetAddress multicastInterface, long heartbeatIntervalMillis,
                            long peerTimeoutMillis) {
        this(mode, manualPeers, groupAddress, groupPort, timeToLive, multicastInterface, heartbeatIntervalMillis,
                peerTimeoutMillis, null, 0, DEFAULT_DNS_INTERVAL_MILLIS);
    }

    private DiscoveryConfig(Mode mode, List<String> manualPeers, InetAddress groupAddress, int groupPort,
                            int timeToLive, InetAddress multicastInterface, long heartbeatIntervalMillis,
                            long peerTimeoutMillis, String dnsName, int dnsPort, long dnsIntervalMillis) {
        this.mode = mode;
        this.manualPeers = Collections.unmodifiableList(new ArrayList<>(manualPeers));
        this.groupAddress = groupAddress;
        this.groupPort = groupPort;
        this.timeToLive = timeToLive;
        this.multicastInterface = multicastInterface;
        this.heartbeatIntervalMillis = heartbeatIntervalMillis;
        this.peerTimeoutMillis = peerTimeoutMillis;
        this.dnsName = dnsName;
        this.dnsPort = dnsPort;
        this.dnsIntervalMillis = dnsIntervalMillis;
    }

    /** @param manualPeersProperty {@code null} when the transport finds its members itself (no properties read) */
    static DiscoveryConfig read(PropertyReader r, String manualPeersProperty) {
        if (manualPeersProperty == null) {
            return new DiscoveryConfig(Mode.TRANSPORT, Collections.emptyList(), null, 0, 0, null, 1000, 3_600_000);
        }
        Mode mode = r.choice(PEER_DISCOVERY, Mode.MANUAL, Mode.class);
        if (mode == Mode.TRANSPORT) {
            throw r.invalid(PEER_DISCOVERY, "transport", "one of manual, automatic, dns");
        }
        List<String> peers = r.list(manualPeersProperty);
        long interval = r.longIn(HEARTBEAT_INTERVAL_MILLIS, 1000, 10, 600_000);
        // stock's rule (a peer is stale after two heartbeat intervals and 100 ms), at least 5 s
        long timeout = r.longIn(PEER_TIMEOUT_MILLIS, Math.max(5000, 2 * interval + 100), 2 * interval, 3_600_000);
        String groupText = r.string(MULTICAST_GROUP_ADDRESS);
        String portText = r.string(MULTICAST_GROUP_PORT);
        int ttl = r.intIn(TIME_TO_LIVE, 1, 0, 255);
        String host = r.string(HOST_NAME);
        String dnsName = r.string(DNS_NAME);
        int dnsPort = r.intIn(DNS_PORT, 0, 0, 65535);
        long dnsInterval = r.longIn(DNS_INTERVAL_MILLIS, DEFAULT_DNS_INTERVAL_MILLIS, 100, 3_600_000);
        if (mode == Mode.MANUAL) {
            return new DiscoveryConfig(mode, peers, null, 0, ttl, null, interval, timeout);
        }
        if (mode == Mode.DNS) {
            if (dnsName == null || dnsName.isEmpty()) {
                throw r.invalid(DNS_NAME, "", "the DNS name whose answers are the peers (e.g. a Kubernetes headless "
                        + "Service, ehrelay.default.svc.cluster.local, or an SRV name, _ehrelay._tcp.…) when "
                        + PEER_DISCOVERY + "=dns");
            }
            checkDnsName(r, DNS_NAME, dnsName);
            // manual peers may be listed beside the name: they stay whatever the name resolves to
            return new DiscoveryConfig(mode, peers, null, 0, ttl, null, interval, timeout, dnsName, dnsPort,
                    dnsInterval);
        }
        if (!peers.isEmpty()) {
            throw r.invalid(manualPeersProperty, String.join("|", peers),
                    "no manual peers when " + PEER_DISCOVERY + "=automatic");
        }
        if (groupText == null) {
            throw r.invalid(MULTICAST_GROUP_ADDRESS, "", "a multicast group such as 230.0.0.1 when "
                    + PEER_DISCOVERY + "=automatic");
        }
        InetAddress group = address(r, MULTICAST_GROUP_ADDRESS, groupText);
        if (!group.isMulticastAddress()) {
            throw r.invalid(MULTICAST_GROUP_ADDRESS, groupText, "a multicast address (224.0.0.0 to 239.255.255.255)");
        }
        if (portText == null) {
            throw r.invalid(MULTICAST_GROUP_PORT, "", "a port from 1 to 65535 when " + PEER_DISCOVERY + "=automatic");
        }
        int port = r.intIn(MULTICAST_GROUP_PORT, 0, 1, 65535);
        InetAddress nic = host == null ? null : address(r, HOST_NAME, host);
        return new DiscoveryConfig(mode, peers, group, port, ttl, nic, interval, timeout);
    }

    /**
     * Refuses a value of property {@code property} that is not one DNS name (letters, digits, '-', '_' and '.'): the
     * check of every provider's {@code dnsName} (JGroups' too).
     */
    public static void checkDnsName(PropertyReader r, String property, String value) {
        if (!value.matches("[A-Za-z0-9_.\\-]+")) {
            throw r.invalid(property, value, "one DNS name (letters, digits, '-', '_' and '.')");
        }
    }

    private static InetAddress address(PropertyReader r, String name, String value) {
        try {
            return InetAddress.getByName(value);
        } catch (UnknownHostException e) {
            throw r.invalid(name, value, "a resolvable host name or IP address");
        }
    }

    public Mode mode() { return mode; }
    public List<String> manualPeers() { return manualPeers; }
    public InetAddress groupAddress() { return groupAddress; }
    public int groupPort() { return groupPort; }
    public int timeToLive() { return timeToLive; }
    /** The address of the interface multicast is bound to, or {@code null} for the system default. */
    public InetAddress multicastInterface() { return multicastInterface; }
    public long heartbeatIntervalMillis() { return heartbeatIntervalMillis; }
    public long peerTimeoutMillis() { return peerTimeoutMillis; }
    /** {@code peerDiscovery=dns}: the name looked up (an SRV name starts with {@code _}), else {@code null}. */
    public String dnsName() { return dnsName; }
    /** The peers' port for the name's A/AAAA answers; 0: this node's own listening port. */
    public int dnsPort() { return dnsPort; }
    public long dnsIntervalMillis() { return dnsIntervalMillis; }
}
