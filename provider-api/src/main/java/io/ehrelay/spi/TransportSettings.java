package io.ehrelay.spi;

/**
 * A transport's own listener settings, read by its listener factory from the
 * {@code cacheManagerPeerListenerFactory} properties and handed to its transport in the {@link ListenerConfig}
 * (see {@link ListenerConfig#transportSettings(Class)}). Implemented by each transport's settings class.
 */
public interface TransportSettings {
}
