package io.ehrelay.jgroups;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.jgroups.conf.ProtocolConfiguration;
import org.jgroups.util.Util;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a stack listens and finds its members (the provider's address properties applied), and who can reach
 * and join it: whether its members authenticate (AUTH, SYM_ENCRYPT, ASYM_ENCRYPT, or
 * JGroups' TLS with client certificates), whether it looks for members on other hosts, and keeping a stack whose
 * members do not authenticate on this host (docs/jgroups.md, "Who may join"). Stateless.
 */
final class StackExposure {

    private static final Logger LOG = LoggerFactory.getLogger(StackExposure.class);

    /** Protocols that admit only members holding the cluster's secret or key: with one, members authenticate. */
    private static final Set<String> AUTHENTICATING = Collections.unmodifiableSet(new TreeSet<>(
            Arrays.asList("AUTH", "SYM_ENCRYPT", "ASYM_ENCRYPT")));

    private StackExposure() {
    }

    /**
     * Whether the stack admits only members holding the cluster's secret, key or a trusted certificate: a protocol
     * of {@link #AUTHENTICATING}, or JGroups' TLS with client certificates required.
     */
    static boolean authenticates(List<ProtocolConfiguration> stack) {
        if (tlsWithClientCertificates(stack)) {
            return true;
        }
        for (ProtocolConfiguration p : stack) {
            String name = p.getProtocolName();
            if (AUTHENTICATING.contains(name.substring(name.lastIndexOf('.') + 1))) {
                return true;
            }
        }
        return false;
    }

    /**
     * Keeps a stack whose members do not authenticate on this host: JGroups cannot refuse a host where it listens
     * (a UDP transport receives datagrams from anyone; any process that reaches a TCP port can join), so a node
     * that admits unauthenticated peers only from this host listens on loopback.
     * <ul>
     * <li>the address JGroups would bind — the system property {@code jgroups.bind_addr} when set (JGroups gives
     * it precedence), else the transport's {@code bind_addr} (where the provider's {@code bindAddress} goes) — is
     * kept when it is loopback;</li>
     * <li>the stack's default (no {@code bind_addr}, or a {@code ${property,...:default}} whose properties are
     * not set, as the shipped stacks' {@code SITE_LOCAL}) becomes loopback;</li>
     * <li>another address, chosen explicitly, is refused, and so are TCPPING hosts other than this one: those
     * members could not join, and each side would serve what the other changed.</li>
     * </ul>
     *
     * @return what the default was, when it was replaced by loopback; {@code null} when kept
     * @throws IllegalArgumentException when members on other hosts are asked for, saying what to set
     */
    static String keepOnThisHost(List<ProtocolConfiguration> stack, JGroupsSettings s) throws Exception {
        List<String> elsewhere = tcppingHostsElsewhere(stack);
        if (!elsewhere.isEmpty()) {
            throw refusal("TCPPING lists members on other hosts (" + String.join(", ", elsewhere) + "), which could "
                    + "not join");
        }
        ProtocolConfiguration transport = stack.get(0);
        String attribute = transport.getProperties().get("bind_addr");
        String property = System.getProperty(JGroupsStacks.BIND_ADDR_PROPERTY);
        // JGroups gives its system property precedence over the stack's attribute (bindAddress included)
        boolean byProperty = property != null && !property.trim().isEmpty();
        String value = byProperty ? property.trim() : attribute != null ? Util.substituteVariable(attribute.trim())
                : null;
        boolean chosen = byProperty || s.bindAddress != null || attribute != null && !onlyDefaults(attribute.trim());
        if (value != null && !value.isEmpty()) {
            InetAddress address;
            try {
                address = chosen ? Util.getAddress(value, Util.getIpStackType()) : null;
            } catch (Exception e) {
                throw new IllegalArgumentException("JGroups cannot resolve its bind address " + value + ": " + e, e);
            }
            if (address != null && address.isLoopbackAddress()) {
                return null;
            }
            if (chosen) {
                String source = byProperty ? "-D" + JGroupsStacks.BIND_ADDR_PROPERTY + "=" + property
                        : s.bindAddress != null ? "bindAddress=" + s.bindAddress
                        : transport.getProtocolName() + " bind_addr=\"" + attribute + "\"";
                throw refusal("JGroups would listen on " + value + " (" + source + "), where any process on any "
                        + "host that reaches it can join the cluster");
            }
        }
        transport.getProperties().put("bind_addr", Util.getLoopback(Util.getIpStackType()).getHostAddress());
        return value == null || value.isEmpty() ? "JGroups' default" : value;
    }

    static IllegalArgumentException refusal(String what) {
        return new IllegalArgumentException(what + ": this node has no clusterSecret, its stack neither "
                + "authenticates nor encrypts, and unauthenticatedPeers admits only this host. Set clusterSecret on "
                + "cacheManagerPeerProviderFactory (the same on every member), or keep the cluster on 127.0.0.1, "
                + "or list the members' hosts in unauthenticatedPeers to let them in without authenticating");
    }

    /**
     * Whether an attribute is only a {@code ${property,...:default}} whose properties are all unset (so JGroups
     * would use the stack's default), as the shipped stacks' {@code ${jgroups.bind_addr:SITE_LOCAL}}.
     */
    static boolean onlyDefaults(String attribute) {
        if (!attribute.startsWith("${") || !attribute.endsWith("}") || attribute.indexOf('}') != attribute.length() - 1) {
            return false;
        }
        String inside = attribute.substring(2, attribute.length() - 1);
        int colon = inside.indexOf(':');
        for (String name : (colon < 0 ? inside : inside.substring(0, colon)).split(",")) {
            if (System.getProperty(name.trim()) != null || System.getenv(name.trim()) != null) {
                return false;
            }
        }
        return true;
    }

    /** TCPPING's hosts that are not this one (names other than {@code localhost} count as other hosts). */
    static List<String> tcppingHostsElsewhere(List<ProtocolConfiguration> stack) {
        List<String> out = new ArrayList<>();
        int ping = JGroupsStacks.indexOf(stack, "TCPPING");
        String hosts = ping < 0 ? null : stack.get(ping).getProperties().get("initial_hosts");
        if (hosts == null) {
            return out;
        }
        for (String entry : Util.substituteVariable(hosts).split(",")) {
            String host = entry.trim();
            int bracket = host.indexOf('[');
            host = (bracket < 0 ? host : host.substring(0, bracket)).trim();
            if (!host.isEmpty() && !host.equalsIgnoreCase("localhost") && !host.startsWith("127.")
                    && !host.equals("::1")) {
                out.add(host);
            }
        }
        return out;
    }

    /**
     * Whether the stack looks for members where this node cannot tell whether they are on this host: multicast
     * (a UDP transport) or a discovery protocol other than TCPPING.
     */
    static boolean discoversOtherHosts(List<ProtocolConfiguration> stack) {
        return stack.get(0).getProtocolName().equals("UDP") || JGroupsStacks.indexOf(stack, "TCPPING") < 0;
    }

    /**
     * JGroups' own TLS with client certificates required (the {@code TCP} transport's {@code tls.enabled} and
     * {@code tls.client_auth=NEED}): a process without a trusted certificate cannot open a connection.
     */
    static boolean tlsWithClientCertificates(List<ProtocolConfiguration> stack) {
        Map<String, String> tp = stack.get(0).getProperties();
        String enabled = tp.get("tls.enabled");
        String clientAuth = tp.get("tls.client_auth");
        return enabled != null && clientAuth != null && "true".equalsIgnoreCase(Util.substituteVariable(enabled.trim()))
                && "NEED".equalsIgnoreCase(Util.substituteVariable(clientAuth.trim()));
    }

    /** The provider's address properties, applied to the transport (first protocol) and TCPPING. */
    static void applyOverrides(List<ProtocolConfiguration> stack, JGroupsSettings s) {
        ProtocolConfiguration transport = stack.get(0);
        String tp = transport.getProtocolName();
        String property = System.getProperty(JGroupsStacks.BIND_ADDR_PROPERTY);
        if (s.bindAddress != null && property != null && !property.trim().isEmpty()
                && !property.trim().equals(s.bindAddress)) {
            LOG.warn("ehrelay: JGroups binds -D{}={}, not bindAddress={}: JGroups gives its system property "
                    + "precedence; set one or the other", JGroupsStacks.BIND_ADDR_PROPERTY, property.trim(), s.bindAddress);
        }
        put(transport, "bind_addr", s.bindAddress);
        put(transport, "bind_port", s.bindPort == null ? null : s.bindPort.toString());
        if (s.multicastAddress != null || s.multicastPort != null || s.timeToLive != null) {
            if (!tp.equals("UDP")) {
                throw new IllegalArgumentException("multicastAddress, multicastPort and timeToLive need a UDP stack; "
                        + "this stack's transport is " + tp);
            }
            put(transport, "mcast_addr", s.multicastAddress);
            put(transport, "mcast_port", s.multicastPort == null ? null : s.multicastPort.toString());
            put(transport, "ip_ttl", s.timeToLive == null ? null : s.timeToLive.toString());
        }
        if (s.initialHosts != null) {
            int ping = JGroupsStacks.indexOf(stack, "TCPPING");
            if (ping < 0) {
                throw new IllegalArgumentException("initialHosts needs a stack with TCPPING");
            }
            put(stack.get(ping), "initial_hosts", s.initialHosts);
        }
        if (s.dnsName != null) {
            int ping = -1;
            for (int i = 0; i < stack.size(); i++) {
                if (stack.get(i).getProtocolName().endsWith("DNS_PING")) {
                    ping = i;
                }
            }
            if (ping < 0) {
                throw new IllegalArgumentException("dnsName needs a stack with DNS_PING (the shipped " + JGroupsStacks.DNS_STACK
                        + ", used when neither file nor connect is set, has it)");
            }
            put(stack.get(ping), "dns_query", s.dnsName);
            put(stack.get(ping), "dns_record_type", s.dnsName.startsWith("_") ? "SRV" : "A");
        }
    }

    private static void put(ProtocolConfiguration p, String attribute, String value) {
        if (value != null) {
            p.getProperties().put(attribute, value);
        }
    }
}
