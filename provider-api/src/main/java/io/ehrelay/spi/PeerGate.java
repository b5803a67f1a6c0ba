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
}
