package io.ehrelay.jgroups;

import io.ehrelay.internal.config.NodeConfig;
import io.ehrelay.internal.config.PropertyReader;
import io.ehrelay.provider.EhrelayPeerProviderFactory;
import io.ehrelay.spi.Transport;

/**
 * {@code cacheManagerPeerProviderFactory} of the JGroups transport, a drop-in for
 * {@code net.sf.ehcache.distribution.jgroups.JGroupsCacheManagerPeerProviderFactory}: the old module's
 * {@code connect} (inline JGroups 3 stack, translated), {@code file} (JGroups 5 XML file, URL or classpath resource,
 * e.g. the shipped {@code ehrelay-jgroups-udp.xml} or {@code ehrelay-jgroups-tcp.xml}) and {@code channelName}
 * (the cluster; default the CacheManager's name, else {@code EH_CACHE}); plus {@code bindAddress}, {@code bindPort},
 * {@code multicastAddress}, {@code multicastPort}, {@code timeToLive}, {@code initialHosts}, {@code callTimeoutMillis},
 * {@code peerOutboundMaxBytes}, {@code retryMaxMillis}, {@code jmxDomain} and the provider-api node properties.
 * Members come from the channel's view: there is no peer list and no {@code peerDiscovery}.
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
