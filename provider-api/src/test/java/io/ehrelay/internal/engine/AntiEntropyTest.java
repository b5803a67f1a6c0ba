package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.Mockito.mock;

import java.util.Arrays;
import java.util.Collections;

import io.ehrelay.internal.codec.DecodedBatch;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.InboundHandler;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The serving side of anti-entropy: what a peer's requests get, and what malformed ones get. */
class AntiEntropyTest {

    private final EngineTestKit kit = new EngineTestKit();
    private final CacheBindings caches = new CacheBindings(kit.cacheManager, kit.metrics, l -> true);
    private final Ordering ordering = new Ordering(Clock.SYSTEM, 600_000, kit.warn);
    private final AntiEntropyServer server = new AntiEntropyServer("cm", caches, kit.warn);
    private final AntiEntropy ae = new AntiEntropy("cm", kit.config, mock(Transport.class), caches,
            name -> Collections.emptyList(), null, ordering, kit.metrics, Clock.SYSTEM, () -> true, kit.warn);

    @AfterEach
    void close() {
        kit.close();
    }

    @Test
    void aDigest_isOneChunkOfTheLeaves_whateverTheCachesSize() throws Exception {
        CacheBinding a = caches.bind("a");
        for (int i = 0; i < 5000; i++) {
            Element e = new Element("k" + i, "v");
            kit.cacheManager.getEhcache("a").put(e, true);
            ordering.localPut(a, kit.cacheManager.getEhcache("a"), e.getObjectKey(), e, EventCodec.hashOf("k" + i),
                    EventCodec.hashOf("v"));
        }
        InboundHandler.StateCursor c = server.open(AntiEntropyServer.PREFIX + "digest\u0000a");
        byte[] digest = c.next(1 << 20);
        assertThat(digest).hasSize(1 + 16 + 4 + 8 * VersionTable.LEAVES);
        assertThat(c.next(1 << 20)).isNull();
    }

    @Test
    void malformedOrUnknownRequests_areRefusedWithAClearError() {
        caches.bind("a");
        for (String bad : new String[] {"digest\u0000nosuchcache", "entries\u0000x\u0000y", "entries\u00004096\u0000zz"
                + "\u0000a", "entries\u00004096\u0000" + "g".repeat(256) + "\u0000a", "other\u0000a"}) {
            assertThatThrownBy(() -> server.open(AntiEntropyServer.PREFIX + bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void entries_ofTheAskedLeaves_areStampedEvents() throws Exception {
        CacheBinding a = caches.bind("a");
        Element e = new Element("k", "v");
        kit.cacheManager.getEhcache("a").put(e, true);
        Version v = ordering.localPut(a, kit.cacheManager.getEhcache("a"), "k", e, EventCodec.hashOf("k"),
                EventCodec.hashOf("v"));
        char[] bits = new char[VersionTable.LEAVES / 4];
        Arrays.fill(bits, 'f');
        InboundHandler.StateCursor c = server.open(AntiEntropyServer.PREFIX + "entries\u00004096\u0000" + new String(bits)
                + "\u0000a");
        byte[] chunk = c.next(1 << 20);
        DecodedBatch d = EventDecoder.decodeBatch(chunk, 0, chunk.length, kit.config.limits());
        assertThat(d.events()).hasSize(1);
        assertThat(d.events().get(0).stamp()).isEqualTo(v.stamp);
        assertThat(d.events().get(0).origin()).isEqualTo(ordering.self());
        assertThat(d.events().get(0).value()).isEqualTo("v");
    }

    @Test
    void entries_listAtMostTwiceTheKeysOfARound_howeverManyDiffer() throws Exception {
        CacheBinding a = caches.bind("a");
        for (int i = 0; i < 40_000; i++) {
            String key = "k" + i;
            a.versions.offer(key, new Version(1000 + i, 7, EventCodec.hashOf(key), 0, true), ordering.self(), 0,
                    () -> { });
        }
        char[] bits = new char[VersionTable.LEAVES / 4];
        Arrays.fill(bits, 'f');
        int maxBytes = 1 << 20;
        InboundHandler.StateCursor c = server.open(AntiEntropyServer.PREFIX + "entries\u0000" + maxBytes + "\u0000"
                + new String(bits) + "\u0000a");
        int events = 0;
        long bytes = 0;
        for (byte[] chunk = c.next(1 << 16); chunk != null; chunk = c.next(1 << 16)) {
            events += EventDecoder.decodeBatch(chunk, 0, chunk.length, kit.config.limits()).events().size();
            bytes += chunk.length;
        }
        long bound = 2 * AntiEntropy.keysPerRound(maxBytes);
        assertThat(bytes).as("the byte bound did not stop it").isLessThan(maxBytes);
        assertThat(events).as("a run of leaves holding at most %d versions, of 40,000", bound)
                .isLessThanOrEqualTo((int) bound).isGreaterThan((int) bound - 200);
    }
}
