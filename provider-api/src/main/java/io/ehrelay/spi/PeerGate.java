package io.ehrelay.spi;

import java.net.InetAddress;

/**
 * Which hosts may replicate with this node without authenticating (the provider property
 * {@code unauthenticatedPeers}; by default only this host: loopback). A transport asks it for every connection or
 * request that arrives unauthenticated (no cluster secret proven, no TLS client certificate) and refuses the ones
 * it does not admit: it reads nothing from them and applies nothing. A refusal is counted in the node's
 * {@code unauthorized} meter and logged (rate-limited) with the property that would admit the host.
 */
public interface PeerGate {

    /**
     * @param address where the unauthenticated connection or request comes from
     * @param what    what arrived, for the log line, e.g. {@code "connection"} or {@code "request"}
     * @return whether to serve it; {@code false} has been counted and logged
     */
    boolean admits(InetAddress address, String what);

    /**
     * Whether any host other than this one may connect without authenticating ({@code unauthenticatedPeers}
     * lists one or is {@code any}). A transport that cannot refuse hosts where it listens (JGroups) listens on
     * loopback when this is {@code false} and its peers do not authenticate. {@code false} unless implemented:
     * a gate that does not say is taken to admit only this host, so such a transport stays on loopback.
     */
    default boolean admitsOtherHosts() {
        return false;
    }
}
