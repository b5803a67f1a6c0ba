package io.ehrelay.jgroups;

import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.jgroups.annotations.Property;
import org.jgroups.conf.ProtocolConfiguration;
import org.jgroups.protocols.TP;
import org.jgroups.stack.DiagnosticsHandler;
import org.jgroups.stack.Protocol;
import org.jgroups.stack.ProtocolStack;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds every socket a JGroups stack listens on where ehrelay says the node listens, the transport's address:
 * diagnostics off unless the stack turns them on (then over TCP on that address), and {@code FD_SOCK2},
 * {@code FD_SOCK} and {@code MPING}, which would bind all addresses without a {@code bind_addr}, on the
 * transport's. Each listener and why: docs/jgroups.md, "What a node listens on".
 */
final class JGroupsListeners {

    private static final Logger LOG = LoggerFactory.getLogger(JGroupsListeners.class);

    static final String DIAG_ENABLED = "diag.enabled";

    /** JGroups 3 transport attributes for diagnostics, and their JGroups 5 names. */
    static final Map<String, String> DIAGNOSTICS_3_TO_5 = Map.of(
            "enable_diagnostics", DIAG_ENABLED,
            "diagnostics_addr", "diag.mcast_addr",
            "diagnostics_port", "diag.port",
            "diagnostics_bind_interfaces", "diag.bind_interfaces",
            "diagnostics_ttl", "diag.ttl",
            "diagnostics_passcode", "diag.passcode");

    private JGroupsListeners() {
    }

    /** A {@code connect=} protocol's JGroups 3 diagnostics attributes under their JGroups 5 names. */
    static Map<String, String> renameDiagnostics(Map<String, String> attributes) {
        for (Map.Entry<String, String> e : DIAGNOSTICS_3_TO_5.entrySet()) {
            String value = attributes.remove(e.getKey());
            if (value != null) {
                attributes.putIfAbsent(e.getValue(), value);
            }
        }
        return attributes;
    }

    /**
     * Diagnostics off in the transport's configuration unless it sets {@code diag.enabled} itself. Asked for without
     * saying how they are reached, they answer over TCP ({@code probe.sh -tcp}), bound like the transport, and not
     * over UDP: JGroups' UDP diagnostics answer from a socket bound to all addresses, whatever {@code diag.bind_addr}
     * says. A stack that sets {@code diag.enable_udp} gets what it set.
     *
     * @return whether the stack asks for diagnostics explicitly
     */
    static boolean diagnosticsOffUnlessAsked(List<ProtocolConfiguration> stack) {
        Map<String, String> tp = stack.get(0).getProperties();
        if (!tp.containsKey(DIAG_ENABLED)) {
            tp.put(DIAG_ENABLED, "false");
            return false;
        }
        if (!tp.containsKey("diag.enable_udp") && !tp.containsKey("diag.enable_tcp")) {
            tp.put("diag.enable_udp", "false");
            tp.put("diag.enable_tcp", "true");
        }
        return true;
    }

    /**
     * Binds what the built (not yet connected) stack would open on all addresses to the transport's address: the
     * listeners of {@code FD_SOCK2} and the like, and diagnostics switched on deliberately (with a WARN saying where
     * they answer).
     *
     * @return the names of the protocols bound here, for the start-up log and tests
     */
    static List<String> bindLikeTransport(ProtocolStack ps, String cacheManager) {
        TP tp = ps.getTransport();
        InetAddress at = tp.getBindAddress();
        if (at == null) {
            return Collections.emptyList(); // the transport binds all addresses: so be it for the others
        }
        List<String> bound = new ArrayList<>();
        for (Protocol p : ps.getProtocols()) {
            if (p == tp) {
                continue;
            }
            Field field = bindAddressField(p.getClass());
            if (field == null) {
                continue;
            }
            try {
                if (field.get(p) == null) {
                    field.set(p, at);
                    bound.add(p.getName());
                }
            } catch (IllegalAccessException e) {
                throw new IllegalStateException("cannot bind JGroups " + p.getName() + " to " + at.getHostAddress()
                        + ": " + e, e);
            }
        }
        DiagnosticsHandler diag = tp.getDiagnosticsHandler();
        if (diag != null && diag.isEnabled()) {
            if (diag.getBindAddress() == null) {
                diag.setBindAddress(at);
            }
            String where = diag.tcpEnabled() ? "TCP on " + diag.getBindAddress().getHostAddress() : "no TCP";
            if (diag.udpEnabled()) {
                if (diag.getBindInterfaces() == null) {
                    NetworkInterface nic = interfaceOf(at);
                    if (nic != null) {
                        diag.setBindInterfaces(Collections.singletonList(nic));
                    }
                }
                where += ", UDP: multicast " + diag.getMcastAddress().getHostAddress() + ":" + diag.getPort() + " on "
                        + (diag.getBindInterfaces() == null ? "every interface" : names(diag.getBindInterfaces()))
                        + ", answered from a socket on all addresses (diag.enable_udp)";
            }
            LOG.warn("ehrelay: CacheManager {}: JGroups diagnostics are on (diag.enabled in the stack): probes are "
                    + "answered ({}){}", cacheManager, where, diag.getPasscode() == null
                    ? " to anyone who reaches them, without a passcode (set diag.passcode)" : "");
            bound.add("diagnostics");
        }
        return bound;
    }

    /** The {@code bind_addr} property of a protocol that is not the transport, if it has one. */
    private static Field bindAddressField(Class<?> type) {
        for (Class<?> c = type; c != null && c != Protocol.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                Property p = f.getAnnotation(Property.class);
                String name = p == null ? null : p.name().isEmpty() ? f.getName() : p.name();
                if ("bind_addr".equals(name) && f.getType() == InetAddress.class) {
                    f.setAccessible(true);
                    return f;
                }
            }
        }
        return null;
    }

    private static NetworkInterface interfaceOf(InetAddress address) {
        try {
            return address.isAnyLocalAddress() ? null : NetworkInterface.getByInetAddress(address);
        } catch (SocketException e) {
            return null;
        }
    }

    private static String names(List<NetworkInterface> nics) {
        List<String> names = new ArrayList<>();
        for (NetworkInterface n : nics) {
            names.add(n.getName());
        }
        return String.join(", ", names);
    }
}
