package io.ehrelay.spi;

import java.util.Objects;

/**
 * A remote node, named by the endpoint its transport understands ({@code host:port} for TCP). Equality is by
 * endpoint. These are the elements of {@code listRemoteCachePeers}. Immutable.
 */
public final class Peer {

    private final String endpoint;

    public Peer(String endpoint) {
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
    }

    public String endpoint() {
        return endpoint;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Peer && ((Peer) o).endpoint.equals(endpoint);
    }

    @Override
    public int hashCode() {
        return endpoint.hashCode();
    }

    @Override
    public String toString() {
        return endpoint;
    }
}
