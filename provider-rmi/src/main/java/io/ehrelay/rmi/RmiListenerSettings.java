package io.ehrelay.rmi;

import io.ehrelay.spi.TransportSettings;
import io.ehrelay.internal.config.PropertyReader;

/** The stock RMI listener's own properties: {@code remoteObjectPort} and {@code socketTimeoutMillis}. Immutable. */
final class RmiListenerSettings implements TransportSettings {

    static final String REMOTE_OBJECT_PORT = "remoteObjectPort";
    static final String SOCKET_TIMEOUT_MILLIS = "socketTimeoutMillis";
    /** The stock default. */
    static final int DEFAULT_SOCKET_TIMEOUT_MILLIS = 120_000;

    final int remoteObjectPort;
    final int socketTimeoutMillis;

    RmiListenerSettings(int remoteObjectPort, int socketTimeoutMillis) {
        this.remoteObjectPort = remoteObjectPort;
        this.socketTimeoutMillis = socketTimeoutMillis;
    }

    static RmiListenerSettings read(PropertyReader r) {
        return new RmiListenerSettings(r.intIn(REMOTE_OBJECT_PORT, 0, 0, 65535),
                r.intIn(SOCKET_TIMEOUT_MILLIS, DEFAULT_SOCKET_TIMEOUT_MILLIS, 200, Integer.MAX_VALUE));
    }
}
