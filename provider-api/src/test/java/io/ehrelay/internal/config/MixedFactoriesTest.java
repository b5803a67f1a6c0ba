package io.ehrelay.internal.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import net.sf.ehcache.config.Configuration;
import net.sf.ehcache.config.ConfigurationFactory;
import org.junit.jupiter.api.Test;

/**
 * Which factory lines {@link MixedFactories} names, read from {@code ehcache.xml} as Ehcache parses it: the old
 * JGroups module's classes under ehrelay's JGroups provider, the default cache, and a listener a JGroups provider
 * has no use for. (Real CacheManagers: {@code TcpDropInTest}, {@code RmiDropInTest}.)
 */
class MixedFactoriesTest {

    private static Configuration parse(String body) {
        String xml = "<ehcache name=\"cm\" updateCheck=\"false\" monitoring=\"off\">\n" + body + "\n</ehcache>";
        return ConfigurationFactory.parseConfiguration(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void theOldJGroupsModulesClasses_underEhrelaysJGroupsProvider_areNamed() {
        Configuration c = parse(""
                + "<cacheManagerPeerProviderFactory class=\"io.ehrelay.jgroups.JGroupsCacheManagerPeerProviderFactory\""
                + " properties=\"channelName=app\"/>\n"
                + "<cacheManagerPeerListenerFactory "
                + "class=\"net.sf.ehcache.distribution.RMICacheManagerPeerListenerFactory\"/>\n"
                + "<defaultCache maxEntriesLocalHeap=\"10\">\n"
                + "  <cacheEventListenerFactory class=\"net.sf.ehcache.distribution.jgroups.JGroupsCacheReplicatorFactory\"/>\n"
                + "</defaultCache>\n"
                + "<cache name=\"users\" maxEntriesLocalHeap=\"10\">\n"
                + "  <cacheEventListenerFactory class=\"io.ehrelay.jgroups.JGroupsCacheReplicatorFactory\"/>\n"
                + "  <cacheEventListenerFactory class=\"com.acme.AuditListenerFactory\"/>\n"
                + "  <bootstrapCacheLoaderFactory "
                + "class=\"net.sf.ehcache.distribution.jgroups.JGroupsBootstrapCacheLoaderFactory\"/>\n"
                + "</cache>");
        assertThat(MixedFactories.problems("cm", c)).containsExactly(
                "ehrelay: cache 'users' uses net.sf.ehcache.distribution.jgroups.JGroupsBootstrapCacheLoaderFactory "
                        + "but CacheManager 'cm' replicates with io.ehrelay.jgroups.JGroupsCacheManagerPeerProviderFactory: "
                        + "it does not bootstrap from peers; use io.ehrelay.jgroups.JGroupsBootstrapCacheLoaderFactory",
                "ehrelay: defaultCache uses net.sf.ehcache.distribution.jgroups.JGroupsCacheReplicatorFactory but "
                        + "CacheManager 'cm' replicates with io.ehrelay.jgroups.JGroupsCacheManagerPeerProviderFactory: "
                        + "its puts are not replicated; use io.ehrelay.jgroups.JGroupsCacheReplicatorFactory",
                "ehrelay: CacheManager 'cm' has the cacheManagerPeerListenerFactory "
                        + "net.sf.ehcache.distribution.RMICacheManagerPeerListenerFactory but replicates with "
                        + "io.ehrelay.jgroups.JGroupsCacheManagerPeerProviderFactory: peers cannot replicate to it; "
                        + "remove it (JGroups has no cacheManagerPeerListenerFactory: its channel listens)");
    }

    @Test
    void twoEhrelayTransports_andAnApplicationsOwnListener_areNamedOnlyWhenTheyDisagree() {
        Configuration c = parse(""
                + "<cacheManagerPeerProviderFactory class=\"io.ehrelay.rmi.RmiCacheManagerPeerProviderFactory\"/>\n"
                + "<cache name=\"users\" maxEntriesLocalHeap=\"10\">\n"
                + "  <cacheEventListenerFactory class=\"io.ehrelay.tcp.TcpCacheReplicatorFactory\"/>\n"
                + "</cache>\n"
                + "<cache name=\"orders\" maxEntriesLocalHeap=\"10\">\n"
                + "  <cacheEventListenerFactory class=\"io.ehrelay.rmi.RmiCacheReplicatorFactory\"/>\n"
                + "  <cacheEventListenerFactory class=\"com.acme.CacheReplicatorFactory\"/>\n"
                + "</cache>");
        assertThat(MixedFactories.problems("cm", c)).containsExactly("ehrelay: cache 'users' uses "
                + "io.ehrelay.tcp.TcpCacheReplicatorFactory but CacheManager 'cm' replicates with "
                + "io.ehrelay.rmi.RmiCacheManagerPeerProviderFactory: its puts are not replicated; use "
                + "io.ehrelay.rmi.RmiCacheReplicatorFactory");
    }
}
