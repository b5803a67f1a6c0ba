package io.ehrelay.jgroups;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerProviderFactory;
import io.ehrelay.spi.Transport;

/**
 * {@code cacheManagerPeerProviderFactory} of the JGroups transport, a drop-in for the old module's
 * {@code net.sf.ehcache.distribution.jgroups.JGroupsCacheManagerPeerProviderFactory}: its {@code connect},
 * {@code file} and {@code channelName}, with ehrelay's address, bound and node properties
 * (docs/configuration.md, "JGroups properties"). The peers are the channel's view: no peer list, no
 * {@code peerDiscovery}.
 */
public class JGroupsCacheManagerPeerProviderFactory extends EhrelayPeerProviderFactory {

    public JGroupsCacheManagerPeerProviderFactory() {
        super(JGroupsSettings.SCHEME, JGroupsSettings.NAME, null);
    }

    @Override
    protected Transport createTransport(PropertyReader reader, NodeConfig nodeConfig) {
        JGroupsSettings settings = JGroupsSettings.read(reader, nodeConfig);
        if (settings.connect != null && settings.file == null) {
            try {
                JGroupsStacks.fromConnect(settings.connect);
            } catch (IllegalArgumentException e) {
                throw reader.invalid("connect", settings.connect, "a JGroups stack PROTOCOL(attr=value;...):PROTOCOL:... ("
                        + e.getMessage() + ")");
            }
        }
        return new JGroupsTransport(settings, nodeConfig.registerJmx());
    }
}
