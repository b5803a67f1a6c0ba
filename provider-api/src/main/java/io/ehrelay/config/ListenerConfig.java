package io.ehrelay.config;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Where a node listens for its peers: the stock {@code hostName} and {@code port} of a
 * {@code cacheManagerPeerListenerFactory}. {@code port=0} picks any free port.
 */
public final class ListenerConfig {

    public static final String HOST_NAME = "hostName";
    public static final String PORT = "port";

    private final String hostName;
    private final int port;
    private final Object transportSettings;

    public ListenerConfig(String hostName, int port) {
        this(hostName, port, null);
    }

    public ListenerConfig(String hostName, int port, Object transportSettings) {
        this.hostName = hostName;
        this.port = port;
        this.transportSettings = transportSettings;
    }

    /** The same listener with the transport's own listener settings attached. */
    public ListenerConfig withTransportSettings(Object settings) {
        return new ListenerConfig(hostName, port, settings);
    }

    /** The transport's own listener settings (read by its listener factory), or {@code null}. */
    public <T> T transportSettings(Class<T> type) {
        return transportSettings == null ? null : type.cast(transportSettings);
    }

    /** Reads {@code hostName} and {@code port}; the caller may read more and must call {@code rejectUnknown}. */
    public static ListenerConfig read(PropertyReader r, int defaultPort) {
        String host = r.string(HOST_NAME);
        if (host == null) {
            try {
                host = InetAddress.getLocalHost().getHostAddress();
            } catch (UnknownHostException e) {
                throw r.invalid(HOST_NAME, "", "an explicit host name: this machine's own name does not resolve");
            }
        } else {
            try {
                InetAddress.getByName(host);
            } catch (UnknownHostException e) {
                throw r.invalid(HOST_NAME, host, "a resolvable host name or IP address");
            }
        }
        int port = r.intIn(PORT, defaultPort, 0, 65535);
        return new ListenerConfig(host, port);
    }

    public String hostName() { return hostName; }
    public int port() { return port; }
}
