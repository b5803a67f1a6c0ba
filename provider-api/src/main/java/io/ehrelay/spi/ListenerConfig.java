package io.ehrelay.spi;


/**
 * Where a node listens for its peers: the stock {@code hostName} and {@code port} of a
 * {@code cacheManagerPeerListenerFactory}. {@code port=0} picks any free port.
 */
public final class ListenerConfig {

    public static final String HOST_NAME = "hostName";
    public static final String PORT = "port";

    private final String hostName;
    private final int port;
    private final TransportSettings transportSettings;

    public ListenerConfig(String hostName, int port) {
        this(hostName, port, null);
    }

    public ListenerConfig(String hostName, int port, TransportSettings transportSettings) {
        this.hostName = hostName;
        this.port = port;
        this.transportSettings = transportSettings;
    }

    /** The same listener with the transport's own listener settings attached. */
    public ListenerConfig withTransportSettings(TransportSettings settings) {
        return new ListenerConfig(hostName, port, settings);
    }

    /** The transport's own listener settings (read by its listener factory), or {@code null}. */
    public <T extends TransportSettings> T transportSettings(Class<T> type) {
        return transportSettings == null ? null : type.cast(transportSettings);
    }

    public String hostName() { return hostName; }
    public int port() { return port; }
}
