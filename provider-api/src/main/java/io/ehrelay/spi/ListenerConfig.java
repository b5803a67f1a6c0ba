package io.ehrelay.spi;


/**
 * Where a node listens for its peers: the stock {@code hostName} and {@code port} of a
 * {@code cacheManagerPeerListenerFactory} ({@code port=0} picks any free port), and where its peers reach it when
 * that differs (NAT, a container's published port): {@code advertisedHostName} and {@code advertisedPort}, which
 * the node tells its peers instead.
 */
public final class ListenerConfig {

    public static final String HOST_NAME = "hostName";
    public static final String PORT = "port";
    public static final String ADVERTISED_HOST_NAME = "advertisedHostName";
    public static final String ADVERTISED_PORT = "advertisedPort";

    private final String hostName;
    private final int port;
    private final TransportSettings transportSettings;
    private final String advertisedHostName;
    private final int advertisedPort;

    public ListenerConfig(String hostName, int port) {
        this(hostName, port, null);
    }

    public ListenerConfig(String hostName, int port, TransportSettings transportSettings) {
        this(hostName, port, transportSettings, null, 0);
    }

    /**
     * @param advertisedHostName where peers reach this node, when not at {@code hostName}; {@code null}: there
     * @param advertisedPort     the port peers reach it at, when not the one it listens on; 0: that one
     */
    public ListenerConfig(String hostName, int port, TransportSettings transportSettings, String advertisedHostName,
                          int advertisedPort) {
        this.hostName = hostName;
        this.port = port;
        this.transportSettings = transportSettings;
        this.advertisedHostName = advertisedHostName;
        this.advertisedPort = advertisedPort;
    }

    /** The same listener with the transport's own listener settings attached. */
    public ListenerConfig withTransportSettings(TransportSettings settings) {
        return new ListenerConfig(hostName, port, settings, advertisedHostName, advertisedPort);
    }

    /** The host this node tells its peers: {@code advertisedHostName}, else {@code hostName}. */
    public String advertisedHostName() {
        return advertisedHostName != null ? advertisedHostName : hostName;
    }

    /** The port this node tells its peers: {@code advertisedPort}, else {@code listening} (the one it listens on). */
    public int advertisedPort(int listening) {
        return advertisedPort > 0 ? advertisedPort : listening;
    }

    /** The transport's own listener settings (read by its listener factory), or {@code null}. */
    public <T extends TransportSettings> T transportSettings(Class<T> type) {
        return transportSettings == null ? null : type.cast(transportSettings);
    }

    public String hostName() { return hostName; }
    public int port() { return port; }
}
