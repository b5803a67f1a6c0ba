package io.ehrelay.contract;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.engine.ReplicationNode;
import io.ehrelay.spi.Op;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import net.sf.ehcache.Status;

/**
 * Starts real CacheManagers from the suite's {@code contract-ehcache.xml}, filled in for one transport, and
 * wires them into a full mesh: each new node lists the running ones as manual peers (so its bootstrap can
 * find them), and the running ones register the newcomer through {@code registerPeer}.
 */
public final class ContractCluster implements AutoCloseable {

    private static final AtomicInteger IDS = new AtomicInteger();

    private final TransportFixture fixture;
    private final List<CacheManager> managers = new CopyOnWriteArrayList<>();

    public ContractCluster(TransportFixture fixture) {
        this.fixture = fixture;
    }

    /** Starts a node that joins every node started before it. */
    public CacheManager start(String label) {
        return start(label, "");
    }

    /** Starts a node with extra provider properties (e.g. {@code queueMaxEvents=50}). */
    public CacheManager start(String label, String extraProviderProperties) {
        return start(label, extraProviderProperties, true);
    }

    /**
     * Starts a node; with {@code awaitMembers=false} it does not wait for automatic discovery to show every node
     * to every other (for a node that refuses its peers).
     */
    public CacheManager start(String label, String extraProviderProperties, boolean awaitMembers) {
        String name = uniqueName(label);
        boolean manual = fixture.manualDiscovery();
        CacheManager cm = new CacheManager(new ByteArrayInputStream(nodeXml(name, extraProviderProperties)
                .getBytes(StandardCharsets.UTF_8)));
        if (manual) {
            String endpoint = endpoint(cm);
            for (CacheManager other : managers) {
                other.getCacheManagerPeerProvider(fixture.scheme()).registerPeer(endpoint);
            }
        }
        managers.add(cm);
        if (!manual && awaitMembers) {
            // discovery (heartbeat, JGroups view) runs on its own time: the suite starts once all see all
            List<CacheManager> all = new ArrayList<>(managers);
            all.removeIf(m -> m.getStatus() != Status.STATUS_ALIVE);
            Await.until(Duration.ofSeconds(30), () -> all.stream().allMatch(
                    m -> node(m).peers().size() >= all.size() - 1),
                    () -> "nodes do not see each other: " + all.stream().map(m -> m.getName() + " sees "
                            + node(m).peers()).collect(Collectors.joining("; ")));
        }
        return cm;
    }

    /** {@code label} with a number no other node of this JVM's suites has, as {@link #start} names its nodes. */
    public static String uniqueName(String label) {
        return label + "-" + IDS.incrementAndGet();
    }

    /**
     * The ehcache.xml {@link #start} would build for a node named {@code name}: the running nodes as its manual
     * peers (with manual discovery), the fixture's and {@code extraProviderProperties} on its provider.
     */
    public String nodeXml(String name, String extraProviderProperties) {
        List<String> props = new ArrayList<>();
        if (fixture.manualDiscovery()) {
            List<String> peers = new ArrayList<>();
            for (CacheManager cm : managers) {
                peers.add(endpoint(cm));
            }
            props.add("peerDiscovery=manual");
            if (!peers.isEmpty()) {
                props.add(fixture.manualPeersProperty() + "=" + String.join("|", peers));
            }
        }
        for (String extra : List.of(fixture.extraProviderProperties(), extraProviderProperties)) {
            if (extra != null && !extra.isBlank()) {
                props.add(extra);
            }
        }
        return xml(name, String.join(", ", props));
    }

    /** The filled-in ehcache.xml for a node. */
    public String xml(String name, String providerProperties) {
        String template;
        try (InputStream in = ContractCluster.class.getResourceAsStream("contract-ehcache.xml")) {
            template = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        if (fixture.listenerFactory() == null) {
            template = template.replaceAll("(?m)^\\s*<cacheManagerPeerListenerFactory[^\n]*\n", "");
        }
        return template.replace("${name}", name)
                .replace("${providerFactory}", fixture.providerFactory())
                .replace("${providerProperties}", providerProperties)
                .replace("${listenerFactory}", String.valueOf(fixture.listenerFactory()))
                .replace("${listenerProperties}", fixture.listenerProperties())
                .replace("${replicatorFactory}", fixture.replicatorFactory())
                .replace("${bootstrapFactory}", fixture.bootstrapFactory());
    }

    /**
     * A stamped write (a remove when {@code value} is null) as a node that then vanished would have sent it: to
     * {@code to} only, through its receive path.
     */
    public void injectFromVanishedPeer(CacheManager to, String cache, String key, String value, long stamp)
            throws Exception {
        int[] hashes = new int[2];
        byte[] ev = value == null
                ? EventCodec.encodeKey(Op.REMOVE, cache, key, null, hashes)
                : EventCodec.encodePut(cache, new Element(key, value), null,
                        hashes);
        EventCodec.stamp(ev, stamp, 0x5eed, hashes[1]);
        node(to).inbound().onEvents("vanished:1",
                ByteBuffer.wrap(EventCodec.singletonBatch(ev)));
    }

    public ReplicationNode node(CacheManager cm) {
        ReplicationNode node = ReplicationNode.find(cm, fixture.scheme());
        if (node == null) {
            throw new AssertionError("no " + fixture.scheme() + " node for " + cm.getName());
        }
        return node;
    }

    public String endpoint(CacheManager cm) {
        return node(cm).localEndpoint();
    }

    public Jmx jmx(CacheManager cm) {
        return new Jmx(cm.getName(), fixture.transportName());
    }

    /** Shuts one node down and forgets it. */
    public void stop(CacheManager cm) {
        managers.remove(cm);
        String endpoint = null;
        try {
            endpoint = endpoint(cm);
        } catch (AssertionError e) {
            // already stopped
        }
        cm.shutdown();
        if (endpoint != null && fixture.manualDiscovery()) {
            for (CacheManager other : managers) {
                other.getCacheManagerPeerProvider(fixture.scheme()).unregisterPeer(endpoint);
            }
        }
    }

    @Override
    public void close() {
        for (CacheManager cm : new ArrayList<>(managers)) {
            try {
                cm.shutdown();
            } catch (RuntimeException e) {
                // keep shutting the others down
            }
        }
        managers.clear();
    }
}
