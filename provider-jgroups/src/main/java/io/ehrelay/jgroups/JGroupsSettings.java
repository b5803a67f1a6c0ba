package io.ehrelay.jgroups;

import java.util.List;

import io.ehrelay.internal.config.DiscoveryConfig;
import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PeerProperties;
import io.ehrelay.internal.config.PropertyReader;

/**
 * JGroups provider settings: the stack ({@code connect} or {@code file}), the cluster name ({@code channelName}),
 * address overrides for the stack, and the relay's call timeout and outbound bound. Immutable.
 */
final class JGroupsSettings {

    static final String SCHEME = "ehrelay-jgroups";
    static final String NAME = "jgroups";
    /** The old module's default cluster name for an unnamed CacheManager. */
    static final String DEFAULT_CLUSTER = "EH_CACHE";
    /** The old module's JMX domain for the channel's MBeans. */
    static final String DEFAULT_JMX_DOMAIN = "JGroupsReplication";
    static final long DEFAULT_INBOUND_BUFFER = 32L << 20;

    final String connect;
    final String file;
    final String channelName;
    final String bindAddress;
    final Integer bindPort;
    final String multicastAddress;
    final Integer multicastPort;
    final Integer timeToLive;
    final String initialHosts;
    /** DNS_PING's query: the name whose answers are the members (SRV records when it starts with '_'); or null. */
    final String dnsName;
    final int callTimeoutMillis;
    final long peerOutboundMaxBytes;
    final long retryMaxMillis;
    final String jmxDomain;
    /** Refuse JGroups object messages whose payload JGroups would Java-deserialize (see {@link ObjectMessageGuard}). */
    final boolean refuseSerializedObjects;
    /** Most connections accepted at once by a {@code TCP} transport (see {@link BoundedSocketFactory}). */
    final int maxInboundConnections;
    /** Bytes of messages over 64 KiB being read at once, all accepted connections together; null: the default. */
    final Long inboundBufferMaxBytes;

    private JGroupsSettings(PropertyReader r, NodeConfig node) {
        String connectText = r.string("connect");
        String fileText = r.string("file");
        // as in the old module: with both, file wins (logged when the stack is built)
        connect = connectText;
        file = fileText;
        channelName = r.string("channelName");
        bindAddress = r.string("bindAddress");
        bindPort = r.string("bindPort") == null ? null : r.intIn("bindPort", 0, 0, 65535);
        multicastAddress = r.string("multicastAddress");
        multicastPort = r.string("multicastPort") == null ? null : r.intIn("multicastPort", 0, 1, 65535);
        timeToLive = r.string("timeToLive") == null ? null : r.intIn("timeToLive", 1, 0, 255);
        List<String> hosts = r.list("initialHosts");
        for (String h : hosts) {
            if (!h.matches("[^\\[\\],\\s]+\\[\\d{1,5}\\]")) {
                throw r.invalid("initialHosts", String.join("|", hosts), "host[port] entries separated by |");
            }
        }
        initialHosts = hosts.isEmpty() ? null : String.join(",", hosts);
        dnsName = r.string(DiscoveryConfig.DNS_NAME);
        if (dnsName != null) {
            DiscoveryConfig.checkDnsName(r, DiscoveryConfig.DNS_NAME, dnsName);
        }
        callTimeoutMillis = r.intIn(PeerProperties.CALL_TIMEOUT_MILLIS, 30_000, 100, 3_600_000);
        peerOutboundMaxBytes = node.peerOutboundMaxBytes();
        retryMaxMillis = r.longIn(PeerProperties.RETRY_MAX_MILLIS, 5000, 10, 600_000);
        jmxDomain = r.string("jmxDomain", DEFAULT_JMX_DOMAIN);
        refuseSerializedObjects = r.bool("refuseSerializedObjects", true);
        maxInboundConnections = r.intIn("maxInboundConnections", 64, 1, 65_535);
        long budget = r.bytesIn("inboundBufferMaxBytes", -1, BoundedSocketFactory.CHARGED_ABOVE, 1L << 40);
        inboundBufferMaxBytes = budget < 0 ? null : budget;
    }

    /**
     * {@code inboundBufferMaxBytes}: as set, else 32 MB or twice the transport's {@code max_length}, whichever is
     * more.
     *
     * @throws IllegalArgumentException when it is set below {@code max_length}: a message JGroups accepts could
     *                                  never be read
     */
    long inboundBufferMaxBytes(long maxLength) {
        if (inboundBufferMaxBytes == null) {
            return Math.max(DEFAULT_INBOUND_BUFFER, 2 * maxLength);
        }
        if (maxLength > inboundBufferMaxBytes) {
            throw new IllegalArgumentException("inboundBufferMaxBytes (" + inboundBufferMaxBytes + " bytes) must be at "
                    + "least the transport's max_length (" + maxLength + " bytes): a message JGroups accepts must fit");
        }
        return inboundBufferMaxBytes;
    }

    static JGroupsSettings read(PropertyReader r, NodeConfig node) {
        return new JGroupsSettings(r, node);
    }
}
