package io.ehrelay.internal.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code unauthenticatedPeers} setting: which hosts may replicate with a node without authenticating.
 * {@code loopback} (the default: this host only), {@code any} (every host: an explicit choice, warned about at
 * every start), or a {@code |}-separated list of addresses or host names, optionally with {@code loopback} (e.g.
 * the stock Ehcache RMI nodes of a mixed cluster, which cannot authenticate). Host names are resolved once, when
 * the CacheManager starts. Immutable.
 */
public final class UnauthenticatedPeers {

    public static final String PROPERTY = "unauthenticatedPeers";

    private final boolean any;
    private final boolean loopback;
    private final Set<InetAddress> addresses;
    private final String setting;

    private UnauthenticatedPeers(boolean any, boolean loopback, Set<InetAddress> addresses, String setting) {
        this.any = any;
        this.loopback = loopback;
        this.addresses = Collections.unmodifiableSet(addresses);
        this.setting = setting;
    }

    /** Only this host. */
    public static UnauthenticatedPeers loopbackOnly() {
        return new UnauthenticatedPeers(false, true, Collections.<InetAddress>emptySet(), "loopback");
    }

    /** No host: what a node with a cluster secret admits unless {@code unauthenticatedPeers} says otherwise. */
    public static UnauthenticatedPeers nobody() {
        return new UnauthenticatedPeers(false, false, Collections.<InetAddress>emptySet(), "none");
    }

    /**
     * @param secret whether the node has a cluster secret: then, unless the property is set, no host is admitted
     *               without proving it (not even this one)
     */
    static UnauthenticatedPeers read(PropertyReader r, boolean secret) {
        List<String> entries = r.list(PROPERTY);
        if (entries.isEmpty()) {
            return secret ? nobody() : loopbackOnly();
        }
        boolean any = false;
        boolean loopback = false;
        Set<InetAddress> addresses = new LinkedHashSet<>();
        for (String e : entries) {
            if (e.equalsIgnoreCase("any")) {
                any = true;
            } else if (e.equalsIgnoreCase("loopback")) {
                loopback = true;
            } else {
                try {
                    Collections.addAll(addresses, InetAddress.getAllByName(e));
                } catch (UnknownHostException ex) {
                    throw r.invalid(PROPERTY, String.join("|", entries), "loopback, any, or addresses or host names "
                            + "separated by | ('" + e + "' does not resolve)");
                }
            }
        }
        if (any && entries.size() > 1) {
            throw r.invalid(PROPERTY, String.join("|", entries), "'any' alone (it admits every host already)");
        }
        return new UnauthenticatedPeers(any, loopback, addresses, String.join("|", entries));
    }

    /** Whether an unauthenticated peer at {@code address} is admitted. */
    public boolean admits(InetAddress address) {
        return any || loopback && address.isLoopbackAddress() || addresses.contains(address);
    }

    /** Whether no host at all is admitted without authenticating. */
    public boolean admitsNone() {
        return !any && !loopback && addresses.isEmpty();
    }

    /** Whether a host other than this one is admitted: {@code any}, or a listed address that is not loopback. */
    public boolean admitsOtherHosts() {
        if (any) {
            return true;
        }
        for (InetAddress a : addresses) {
            if (!a.isLoopbackAddress()) {
                return true;
            }
        }
        return false;
    }

    /** Every host. */
    public boolean any() {
        return any;
    }

    /** This host (with {@link #addresses()}, if any). */
    public boolean loopback() {
        return loopback;
    }

    /** What admits a host beyond this node, for log lines: e.g. {@code loopback} or {@code loopback|10.0.0.5}. */
    public String setting() {
        return setting;
    }

    /** The listed addresses, for log lines. */
    public List<String> addresses() {
        List<String> out = new ArrayList<>();
        for (InetAddress a : addresses) {
            out.add(a.getHostAddress());
        }
        return out;
    }
}
