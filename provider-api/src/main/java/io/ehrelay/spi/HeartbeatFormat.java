package io.ehrelay.spi;

import java.util.List;

/**
 * The packets of automatic discovery, when a transport must speak another protocol's heartbeat (e.g. Ehcache's
 * own RMI heartbeat, so that stock and ehrelay nodes find each other). Implementations are thread-safe.
 */
public interface HeartbeatFormat {

    /** The largest packet this format sends or accepts. */
    int maxPacketBytes();

    /** The packets announcing this node (called once per heartbeat interval). */
    List<byte[]> encode(String localEndpoint);

    /**
     * The peer endpoints a received packet announces (possibly this node's own, which the directory ignores).
     *
     * @throws IllegalArgumentException when the packet is malformed (counted in {@code malformedHeartbeats})
     */
    List<String> decode(byte[] data, int length);
}
