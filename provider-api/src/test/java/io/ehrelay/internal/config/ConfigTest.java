package io.ehrelay.internal.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Properties;
import java.util.function.Function;
import java.util.function.Predicate;

import io.ehrelay.config.InvalidConfigurationException;
import io.ehrelay.config.OverflowPolicy;
import io.ehrelay.config.SyncFailurePolicy;
import io.ehrelay.testing.LogCapture;
import io.ehrelay.testing.TestProperties;
import net.sf.ehcache.CacheManager;
import org.junit.jupiter.api.Test;

class ConfigTest {

    private static Properties props(String... kv) {
        return TestProperties.of(kv);
    }

    @Test
    void replicatorDefaults_areTheStockOnes() {
        ReplicatorConfig c = ReplicatorConfig.parse("test", null);
        assertThat(c.replicatePuts()).isTrue();
        assertThat(c.replicatePutsViaCopy()).isTrue();
        assertThat(c.replicateUpdates()).isTrue();
        assertThat(c.replicateUpdatesViaCopy()).isTrue();
        assertThat(c.replicateRemovals()).isTrue();
        assertThat(c.asynchronous()).isTrue();
        assertThat(c.asyncIntervalMillis()).isEqualTo(1000);
        assertThat(c.asyncMaxBatchSize()).isEqualTo(1000);
        assertThat(c.syncFailurePolicy()).isEqualTo(SyncFailurePolicy.THROW);
    }

    @Test
    void stockPropertyNames_areRead() {
        ReplicatorConfig c = ReplicatorConfig.parse("test", props("replicatePuts", "false", "replicateUpdatesViaCopy",
                " FALSE ", "replicateAsynchronously", "false", "syncFailurePolicy", "count", "syncTimeoutMillis", "250"));
        assertThat(c.replicatePuts()).isFalse();
        assertThat(c.replicateUpdatesViaCopy()).isFalse();
        assertThat(c.asynchronous()).isFalse();
        assertThat(c.syncFailurePolicy()).isEqualTo(SyncFailurePolicy.COUNT);
        assertThat(c.syncTimeoutMillis()).isEqualTo(250);
    }

    @Test
    void dnsDiscovery_readsItsName_portAndInterval_andSaysWhatIsMissing() {
        DiscoveryConfig d = NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "dns", "dnsName",
                "ehrelay.default.svc.cluster.local", "dnsPort", "40002", "dnsIntervalMillis", "2000")), "peers")
                .discovery();
        assertThat(d.mode()).isEqualTo(DiscoveryConfig.Mode.DNS);
        assertThat(d.dnsName()).isEqualTo("ehrelay.default.svc.cluster.local");
        assertThat(d.dnsPort()).isEqualTo(40002);
        assertThat(d.dnsIntervalMillis()).isEqualTo(2000);
        DiscoveryConfig defaults = NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "DNS", "dnsName",
                "_ehrelay._tcp.peers")), "peers").discovery();
        assertThat(defaults.dnsPort()).as("0: the node's own port").isZero();
        assertThat(defaults.dnsIntervalMillis()).isEqualTo(5000);
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("TcpCacheManagerPeerProviderFactory",
                props("peerDiscovery", "dns")), "peers"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("'dnsName'").hasMessageContaining("peerDiscovery=dns");
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "dns", "dnsName",
                "a b")), "peers"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("one DNS name");
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "transport")),
                "peers"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("manual, automatic, dns");
    }

    @Test
    void malformedBoolean_namesPropertyValueAndAccepted() {
        assertThatThrownBy(() -> ReplicatorConfig.parse("TcpCacheReplicatorFactory", props("replicatePuts", "yes")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("TcpCacheReplicatorFactory")
                .hasMessageContaining("'replicatePuts'")
                .hasMessageContaining("'yes'")
                .hasMessageContaining("true or false");
    }

    @Test
    void anEmptyValue_meansTheDefault_withOneWarnPerPropertyNamingIt() {
        try (LogCapture log = LogCapture.start()) {
            PropertyReader r = new PropertyReader("EmptyValuesFactory", props("queueMaxBytes", "", "overflowPolicy",
                    " ", "registerJmx", "", "dispatcherThreads", "\t", "hostName", ""));
            NodeConfig c = NodeConfig.read(r, "peers");
            NodeConfig defaults = NodeConfig.read(new PropertyReader("f", null), "peers");
            assertThat(c.queueMaxBytes()).isEqualTo(defaults.queueMaxBytes()).isEqualTo(64L << 20);
            assertThat(c.overflowPolicy()).isEqualTo(OverflowPolicy.BLOCK);
            assertThat(c.registerJmx()).isTrue();
            assertThat(c.dispatcherThreads()).isEqualTo(1);
            // read twice (as two parts of a factory may), still one WARN each
            assertThat(r.bytesIn("queueMaxBytes", 64L << 20, 1, Long.MAX_VALUE)).isEqualTo(64L << 20);
            assertThat(r.emptyDefaults()).containsExactlyInAnyOrder("queueMaxBytes", "overflowPolicy", "dispatcherThreads",
                    "registerJmx");
            assertThat(log.lines("of EmptyValuesFactory is empty")).hasSize(4);
            assertThat(log.lines("ehrelay: property 'queueMaxBytes' of EmptyValuesFactory is empty; using its "
                    + "default 64m")).hasSize(1);
            assertThat(log.lines("ehrelay: property 'overflowPolicy' of EmptyValuesFactory is empty; using its "
                    + "default block")).hasSize(1);
            assertThat(log.lines("ehrelay: property 'registerJmx' of EmptyValuesFactory is empty; using its "
                    + "default true")).hasSize(1);
            assertThat(log.lines("ehrelay: property 'dispatcherThreads' of EmptyValuesFactory is empty; using its "
                    + "default 1")).hasSize(1);
            // a text property left empty stays "not set", as in stock files (hostName=), without a word
            assertThat(r.string("hostName")).isNull();
            assertThat(log.lines("'hostName'")).isEmpty();
            r.rejectUnknown();
        }
        try (LogCapture log = LogCapture.start()) {
            ReplicatorConfig rc = ReplicatorConfig.parse("EmptyReplicatorFactory", props("replicatePuts", " ",
                    "syncTimeoutMillis", ""));
            assertThat(rc.replicatePuts()).isTrue();
            assertThat(rc.syncTimeoutMillis()).isEqualTo(5000);
            assertThat(log.lines("ehrelay: property 'replicatePuts' of EmptyReplicatorFactory is empty; using its "
                    + "default true")).hasSize(1);
            assertThat(log.lines("ehrelay: property 'syncTimeoutMillis' of EmptyReplicatorFactory is empty; using "
                    + "its default 5000")).hasSize(1);
        }
        // a value that is not empty is still checked
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f", props("queueMaxBytes", "lots")), "peers"))
                .isInstanceOf(InvalidConfigurationException.class).hasMessageContaining("'queueMaxBytes'")
                .hasMessageContaining("'lots'");
    }

    @Test
    void anEmptyValue_givenUnderAnOldName_isNamedAsWritten() {
        try (LogCapture log = LogCapture.start()) {
            PropertyReader r = new PropertyReader("f", props("aliasOld7Millis", ""));
            assertThat(r.alias("aliasOld7Millis", "aliasNew7Millis").longIn("aliasNew7Millis", 5000, 1, 10_000))
                    .isEqualTo(5000);
            assertThat(log.lines("ehrelay: property 'aliasOld7Millis' of f is empty; using its default 5000"))
                    .hasSize(1);
        }
    }

    @Test
    void byteSizes_inTheWarn_areWrittenAsUsersWriteThem() {
        assertThat(PropertyReader.byteSize(64L << 20)).isEqualTo("64m");
        assertThat(PropertyReader.byteSize(1L << 30)).isEqualTo("1g");
        assertThat(PropertyReader.byteSize(512 << 10)).isEqualTo("512k");
        assertThat(PropertyReader.byteSize(5_000_000)).isEqualTo("5000000");
    }

    @Test
    void peersAfterASpace_orAComma_areFound_andNamedWithTheSeparator() {
        Predicate<String> hostPort = e -> e.matches("[^\\s:/]+:\\d+(/.*)?");
        assertThat(PeerListSeparator.splitAtSpaces("a:1 b:2  c:3", hostPort)).containsExactly("a:1", "b:2", "c:3");
        assertThat(PeerListSeparator.splitAtSpaces("a:1/my cache b:2/c", hostPort))
                .containsExactly("a:1/my cache", "b:2/c");
        // one peer, a space in what follows it: the transport judges it
        assertThat(PeerListSeparator.splitAtSpaces("a:1/my cache", hostPort)).containsExactly("a:1/my cache");
        assertThat(PeerListSeparator.splitAtSpaces("a:1", hostPort)).containsExactly("a:1");

        PropertyReader spaced = new PropertyReader("F", props("peers", "a:1 b:2|c:3"));
        assertThatThrownBy(() -> PeerListSeparator.check(spaced, "peers", spaced.list("peers"), null, null, hostPort))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessage("ehrelay F: peers: 'a:1 b:2' holds a space; separate peers with '|' (peers=a:1|b:2|c:3)");
        // what Ehcache hands the factory for "peers=a:1, b:2, x=3": b arrives as a property of its own
        PropertyReader comma = new PropertyReader("F", props("peers", "a:1", "b", "2", "x", "3"));
        comma.list("peers");
        assertThatThrownBy(() -> PeerListSeparator.check(comma, "peers", comma.list("peers"), "peers=a:1, b:2, x=3",
                null, hostPort)).isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("peers: 'b:2' follows a comma").hasMessageContaining("(peers=a:1|b:2)");
        // an unknown property written name=value is no peer, and one the factory read is not looked at
        PropertyReader typo = new PropertyReader("F", props("peers", "a:1", "x", "3"));
        PeerListSeparator.check(typo, "peers", typo.list("peers"), "peers=a:1, x=3", ",", hostPort);
        PropertyReader colon = new PropertyReader("F", props("peers", "a:1", "x", "3"));
        colon.list("peers");
        colon.intIn("x", 0, 0, 10);
        PeerListSeparator.check(colon, "peers", colon.list("peers"), "peers=a:1, x:3", ",", hostPort);
    }

    @Test
    void aPropertyGivenTwice_isFound_inTheRawAttribute() {
        assertThat(RepeatedKeys.repeated("queueMaxEvents=100000, peers=h:1, queueMaxEvents = 10", ","))
                .isEqualTo("queueMaxEvents");
        assertThat(RepeatedKeys.repeated("a=1; b=2;; c:3", ";")).isNull();
        assertThat(RepeatedKeys.repeated("a=1|x, a:2", ",")).isEqualTo("a");
    }

    @Test
    void aPropertyGivenTwice_refusesTheCacheManager_namingTheCache() {
        String xml = "<ehcache updateCheck=\"false\" name=\"twice\">"
                + "<cacheManagerPeerProviderFactory class=\"io.ehrelay.loopback.LoopbackCacheManagerPeerProviderFactory\""
                + " properties=\"peerDiscovery=manual\"/>"
                + "<cache name=\"orders\" maxEntriesLocalHeap=\"10\"><cacheEventListenerFactory"
                + " class=\"io.ehrelay.loopback.LoopbackCacheReplicatorFactory\""
                + " properties=\"replicatePuts=false, replicateAsynchronously=true, replicatePuts=true\"/></cache>"
                + "</ehcache>";
        assertThatThrownBy(() -> new CacheManager(new ByteArrayInputStream(
                xml.getBytes(StandardCharsets.UTF_8))))
                .hasStackTraceContaining("property 'replicatePuts' is given more than once")
                .hasStackTraceContaining("cacheEventListenerFactory of cache orders");
    }

    @Test
    void anAllowListWildcard_overAWholeNameSpace_isRefused() {
        for (String broad : new String[] {"java.**", "javax.*", "com.**", "**", "*", "org.*.**"}) {
            assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f", props("allowedClasses", broad)),
                    "peers")).as(broad).isInstanceOf(InvalidConfigurationException.class)
                    .hasMessageContaining("admits too much");
        }
        NodeConfig ok = NodeConfig.read(new PropertyReader("f", props("allowedClasses",
                "com.acme.**|com.acme.model.*|java.util.concurrent.**|com.acme.Order")), "peers");
        assertThat(ok.limits().allowList().allows("com.acme.billing.Invoice")).isTrue();
    }

    @Test
    void unknownProperty_isRejectedListingTheAcceptedOnes() {
        assertThatThrownBy(() -> ReplicatorConfig.parse("f", props("replicatePut", "false")))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("[replicatePut]")
                .hasMessageContaining("replicatePuts");
    }

    @Test
    void intervalBelowStockMinimum_isRejected() {
        assertThatThrownBy(() -> ReplicatorConfig.parse("f", props("asynchronousReplicationIntervalMillis", "5")))
                .hasMessageContaining("from 10");
    }

    @Test
    void bootstrapChunkSize_followsStockBounds() {
        assertThat(BootstrapConfig.parse("f", null).maximumChunkSizeBytes()).isEqualTo(5_000_000);
        assertThat(BootstrapConfig.parse("f", null).asynchronous()).isTrue();
        assertThatThrownBy(() -> BootstrapConfig.parse("f", props("maximumChunkSizeBytes", "100")))
                .hasMessageContaining("maximumChunkSizeBytes");
    }

    @Test
    void byteSizes_acceptSuffixesAndRejectGarbage() {
        PropertyReader r = new PropertyReader("f", props("a", "64m", "b", "512K", "c", "1g", "d", "12", "e", "7x"));
        assertThat(r.bytesIn("a", 0, 0, Long.MAX_VALUE)).isEqualTo(64L << 20);
        assertThat(r.bytesIn("b", 0, 0, Long.MAX_VALUE)).isEqualTo(512L << 10);
        assertThat(r.bytesIn("c", 0, 0, Long.MAX_VALUE)).isEqualTo(1L << 30);
        assertThat(r.bytesIn("d", 0, 0, Long.MAX_VALUE)).isEqualTo(12);
        assertThatThrownBy(() -> r.bytesIn("e", 0, 0, Long.MAX_VALUE)).hasMessageContaining("'7x'");
    }

    @Test
    void nodeDefaults_areBounded() {
        NodeConfig c = NodeConfig.read(new PropertyReader("f", null), "peers");
        assertThat(c.queueMaxBytes()).isEqualTo(64L << 20);
        assertThat(c.queueMaxEvents()).isEqualTo(100_000);
        assertThat(c.overflowPolicy()).isEqualTo(OverflowPolicy.BLOCK);
        assertThat(c.overflowBlockMillis()).isEqualTo(1000);
        assertThat(c.dispatcherThreads()).isEqualTo(1);
        assertThat(c.discovery().mode()).isEqualTo(DiscoveryConfig.Mode.MANUAL);
        assertThat(c.limits().allowList().allows("java.lang.String")).isTrue();
        assertThat(c.limits().allowList().allows("com.acme.Order")).isFalse();
    }

    @Test
    void unauthenticatedPeers_saysWhetherOtherHostsAreAdmitted() {
        Function<String, UnauthenticatedPeers> read = v -> NodeConfig.read(
                new PropertyReader("f", v == null ? null : props("unauthenticatedPeers", v)), "peers")
                .unauthenticatedPeers();
        assertThat(read.apply(null).admitsOtherHosts()).as("default: loopback").isFalse();
        assertThat(read.apply("loopback").admitsOtherHosts()).isFalse();
        assertThat(read.apply("127.0.0.1|loopback").admitsOtherHosts()).as("a loopback address listed").isFalse();
        assertThat(read.apply("loopback|192.0.2.7").admitsOtherHosts()).isTrue();
        assertThat(read.apply("any").admitsOtherHosts()).isTrue();
        assertThat(read.apply("loopback|192.0.2.7").admits(InetAddress.getLoopbackAddress())).isTrue();
    }

    @Test
    void manualPeers_areSplitOnBar() {
        NodeConfig c = NodeConfig.read(new PropertyReader("f", props("peers", "h1:1| h2:2 |")), "peers");
        assertThat(c.discovery().manualPeers()).containsExactly("h1:1", "h2:2");
    }

    @Test
    void automaticDiscovery_needsAMulticastGroup() {
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "automatic")), "peers"))
                .hasMessageContaining("multicastGroupAddress");
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "automatic",
                "multicastGroupAddress", "10.1.2.3", "multicastGroupPort", "4446")), "peers"))
                .hasMessageContaining("multicast address");
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "sometimes")), "peers"))
                .hasMessageContaining("manual, automatic");
        NodeConfig ok = NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "automatic",
                "multicastGroupAddress", "230.0.0.1", "multicastGroupPort", "4446", "timeToLive", "0",
                "hostName", "127.0.0.1")), "peers");
        assertThat(ok.discovery().groupPort()).isEqualTo(4446);
        assertThat(ok.discovery().timeToLive()).isZero();
        assertThat(ok.discovery().peerTimeoutMillis()).as("at least 5 s").isEqualTo(5000);
    }

    @Test
    void peerTimeout_followsStocksRule_twoHeartbeatsAnd100Ms_atLeast5s() {
        NodeConfig slow = NodeConfig.read(new PropertyReader("f", props("peerDiscovery", "automatic",
                "multicastGroupAddress", "230.0.0.1", "multicastGroupPort", "4446", "hostName", "127.0.0.1",
                "heartbeatIntervalMillis", "5000")), "peers");
        assertThat(slow.discovery().peerTimeoutMillis()).as("stock's stale time for 5 s heartbeats").isEqualTo(10_100);
    }

    @Test
    void batchLargerThanFrame_isRejected() {
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f", props("batchMaxBytes", "2m",
                "maxFrameBytes", "1m")), "peers")).hasMessageContaining("batchMaxBytes");
    }

    @Test
    void peerOutboundBound_mustHoldTheBatchesInFlight() {
        NodeConfig defaults = NodeConfig.read(new PropertyReader("f", null), "peers");
        assertThat(defaults.peerOutboundMaxBytes()).isEqualTo(16L << 20);
        assertThat(NodeConfig.read(new PropertyReader("f", props("peerOutboundMaxBytes", "64m", "batchMaxBytes", "8m")),
                "peers").peerOutboundMaxBytes()).isEqualTo(64L << 20);

        // two 8 MB batches and their headers do not fit in 16 MB: a healthy peer would see batches refused
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("TcpCacheManagerPeerProviderFactory",
                props("batchMaxBytes", "8m")), "peers"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("'peerOutboundMaxBytes'")
                .hasMessageContaining("'16777216'")
                .hasMessageContaining("at least 2 x dispatcherThreads x (batchMaxBytes + 64 KB) = 16908288 bytes");
        assertThatThrownBy(() -> NodeConfig.read(new PropertyReader("f",
                props("dispatcherThreads", "4", "batchMaxBytes", "4m")), "peers"))
                .hasMessageContaining("= 34078720 bytes");
    }

    @Test
    void alias_readsTheOldNameAsTheNewOne() {
        PropertyReader r = new PropertyReader("f", props("aliasOldMillis", "250"));
        r.alias("aliasOldMillis", "aliasNewMillis");
        assertThat(r.longIn("aliasNewMillis", 5000, 10, 600_000)).isEqualTo(250);
        r.rejectUnknown();
    }

    @Test
    void alias_withoutTheOldName_readsTheNewOneOrTheDefault() {
        PropertyReader r = new PropertyReader("f", props("aliasNew2Millis", "300"));
        r.alias("aliasOld2Millis", "aliasNew2Millis");
        assertThat(r.longIn("aliasNew2Millis", 5000, 10, 600_000)).isEqualTo(300);
        PropertyReader none = new PropertyReader("f", props());
        none.alias("aliasOld2Millis", "aliasNew2Millis");
        assertThat(none.longIn("aliasNew2Millis", 5000, 10, 600_000)).isEqualTo(5000);
    }

    @Test
    void alias_bothNamesGiven_isRejectedNamingBoth() {
        PropertyReader r = new PropertyReader("TcpCacheManagerPeerProviderFactory",
                props("reconnectBackoffMaxMillis", "100", "retryMaxMillis", "200"));
        assertThatThrownBy(() -> r.alias("reconnectBackoffMaxMillis", "retryMaxMillis"))
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("TcpCacheManagerPeerProviderFactory")
                .hasMessageContaining("'reconnectBackoffMaxMillis'")
                .hasMessageContaining("'retryMaxMillis'");
    }

    @Test
    void alias_malformedValue_namesThePropertyAsWritten() {
        PropertyReader r = new PropertyReader("f", props("aliasOld3Millis", "soon"));
        r.alias("aliasOld3Millis", "aliasNew3Millis");
        assertThatThrownBy(() -> r.longIn("aliasNew3Millis", 5000, 10, 600_000))
                .hasMessageContaining("'aliasOld3Millis'")
                .hasMessageContaining("'soon'");
    }

    @Test
    void alias_unknownPropertiesAreStillRejected_andTheOldNameIsNotListedAsAccepted() {
        PropertyReader r = new PropertyReader("f", props("aliasOld4Millis", "250", "retryMaxMilis", "1"));
        r.alias("aliasOld4Millis", "aliasNew4Millis");
        r.longIn("aliasNew4Millis", 5000, 10, 600_000);
        assertThatThrownBy(r::rejectUnknown)
                .isInstanceOf(InvalidConfigurationException.class)
                .hasMessageContaining("[retryMaxMilis]")
                .hasMessageContaining("aliasNew4Millis")
                .hasMessageNotContaining("aliasOld4Millis");
    }

    @Test
    void alias_announcesEachOldNameOnce() {
        for (int i = 0; i < 3; i++) {
            new PropertyReader("f", props("aliasOld5Millis", "250")).alias("aliasOld5Millis", "aliasNew5Millis");
        }
        assertThat(PropertyReader.announceRename("aliasOld5Millis", "aliasNew5Millis")).isFalse();
        assertThat(PropertyReader.announceRename("aliasOld6Millis", "aliasNew6Millis")).isTrue();
        assertThat(PropertyReader.announceRename("aliasOld6Millis", "aliasNew6Millis")).isFalse();
    }
}
