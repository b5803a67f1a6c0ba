package io.ehrelay.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;

import io.ehrelay.contract.AllowedValue;
import io.ehrelay.contract.Gadget;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;

class EventCodecTest {

    private static final CodecLimits LIMITS = CodecLimits.defaults();

    private static byte[] batch(byte[]... events) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(EventCodec.batchHeader(events.length));
        for (byte[] e : events) {
            out.writeBytes(e);
        }
        return out.toByteArray();
    }

    private static List<ReplicationEvent> decode(byte[] b) throws MalformedFrameException {
        return EventDecoder.decodeBatch(b, 0, b.length, LIMITS).events();
    }

    @Test
    void membershipAnnouncement_roundTrips_andIsNoEventBatch() throws Exception {
        byte[] b = EventCodec.membershipBatch(Arrays.asList("orders", "caf\u00e9"),
                Collections.singletonList("gone"), 42, 3);
        DecodedBatch d = EventDecoder.decodeBatch(b, 0, b.length, LIMITS);
        assertThat(d.members()).containsExactly("orders", "caf\u00e9");
        assertThat(d.removed()).containsExactly("gone");
        assertThat(d.events()).isEmpty();
        assertThat(d.stream()).isEqualTo(42);
        assertThat(d.seq()).isEqualTo(3);
        byte[] none = EventCodec.membershipBatch(Collections.emptyList(),
                Collections.emptyList(), 42, 4);
        assertThat(EventDecoder.decodeBatch(none, 0, none.length, LIMITS).members()).isEmpty();
        byte[] events = EventCodec.singletonBatch(EventCodec.encodeRemoveAll("orders"));
        assertThat(EventDecoder.decodeBatch(events, 0, events.length, LIMITS).members()).isNull();
    }

    @Test
    void membershipAnnouncement_thatIsDamaged_isRefusedWhole() throws Exception {
        byte[] b = EventCodec.membershipBatch(Collections.singletonList("orders"),
                Collections.emptyList(), 42, 1);
        byte[] entryOp = b.clone();
        entryOp[EventCodec.BATCH_HEADER_BYTES + 4] = (byte) Op.REMOVE_ALL.code(); // an event inside an announcement
        assertThatThrownBy(() -> EventDecoder.decodeBatch(entryOp, 0, entryOp.length, LIMITS))
                .isInstanceOf(MalformedFrameException.class).hasMessageContaining("membership announcement");
        byte[] withLost = b.clone();
        withLost[5] = (byte) (EventCodec.FLAG_MEMBERSHIP | EventCodec.FLAG_LOST);
        assertThatThrownBy(() -> EventDecoder.decodeBatch(withLost, 0, withLost.length, LIMITS))
                .isInstanceOf(MalformedFrameException.class);
        assertThatThrownBy(() -> EventDecoder.decodeBatch(b, 0, b.length - 1, LIMITS))
                .isInstanceOf(MalformedFrameException.class);
        // a removeAll entry must not pass for a membership entry, nor the reverse: op 5 in an event batch
        byte[] asEvents = b.clone();
        asEvents[5] = 0;
        ByteBuffer.wrap(asEvents, 6, 16).putLong(0).putLong(0);
        assertThatThrownBy(() -> EventDecoder.decodeBatch(asEvents, 0, asEvents.length, LIMITS))
                .isInstanceOf(MalformedFrameException.class).hasMessageContaining("unknown operation code 5");
    }

    @Test
    void roundTrip_keepsOperationKeyValueAndMetadata() throws Exception {
        Element e = new Element("key", new byte[] {9, 8, 7}, 42, 1000, 2000, 5, false, 300, 120, 3000);
        byte[] b = batch(EventCodec.encodePut("cache#1", e), EventCodec.encodeKey(Op.REMOVE, "c", 7L),
                EventCodec.encodeKey(Op.INVALIDATE, "c", "k"), EventCodec.encodeRemoveAll("c"));
        List<ReplicationEvent> events = decode(b);
        assertThat(events).extracting(ReplicationEvent::op).containsExactly(Op.PUT, Op.REMOVE, Op.INVALIDATE, Op.REMOVE_ALL);
        ReplicationEvent put = events.get(0);
        assertThat(put.cacheName()).isEqualTo("cache#1");
        Element back = put.toElement();
        assertThat(back.getObjectKey()).isEqualTo("key");
        assertThat((byte[]) back.getObjectValue()).containsExactly(9, 8, 7);
        assertThat(back.getVersion()).isEqualTo(42);
        assertThat(back.getCreationTime()).isEqualTo(1000);
        assertThat(back.getLastAccessTime()).isEqualTo(2000);
        assertThat(back.getHitCount()).isEqualTo(5);
        assertThat(back.getLastUpdateTime()).isEqualTo(3000);
        assertThat(back.getTimeToLive()).isEqualTo(300);
        assertThat(back.getTimeToIdle()).isEqualTo(120);
        assertThat(back.usesCacheDefaultLifespan()).isFalse();
        assertThat(events.get(1).key()).isEqualTo(7L);
    }

    @Test
    void aBatchInDirectMemory_decodesAsFromAnArray_hashesIncluded_andTheBufferIsNotMoved() throws Exception {
        Element put = new Element("direct-key", new byte[] {1, 2, 3, 4, 5});
        byte[] b = batch(EventCodec.encodePut("c", put), EventCodec.encodeKey(Op.REMOVE, "c", 77L),
                EventCodec.encodePut("c", new Element(12345, "a value")));
        // the batch in the middle of a larger direct buffer, as a transport's read buffer holds it
        ByteBuffer direct = ByteBuffer.allocateDirect(b.length + 40);
        direct.position(17);
        direct.put(b);
        direct.limit(17 + b.length).position(17);
        List<ReplicationEvent> fromDirect = EventDecoder.decodeBatch(direct, LIMITS).events();
        assertThat(direct.position()).isEqualTo(17);
        assertThat(direct.limit()).isEqualTo(17 + b.length);
        List<ReplicationEvent> fromArray = decode(b);
        assertThat(fromDirect).extracting(ReplicationEvent::op, ReplicationEvent::key, ReplicationEvent::keyHash,
                ReplicationEvent::valueHash).containsExactlyElementsOf(
                        fromArray.stream().map(e -> tuple(e.op(), e.key(), e.keyHash(), e.valueHash()))
                                .collect(Collectors.toList()));
        assertThat(fromDirect.get(0).keyHash()).isEqualTo(EventCodec.hashOf("direct-key"));
        assertThat(fromDirect.get(0).valueHash()).isEqualTo(EventCodec.hashOf(new byte[] {1, 2, 3, 4, 5}));
        assertThat(fromDirect.get(1).keyHash()).isEqualTo(EventCodec.hashOf(77L));
        assertThat(fromDirect.get(2).valueHash()).isEqualTo(EventCodec.hashOf("a value"));
    }

    @Test
    void fastPathTypes_roundTripExactly() throws Exception {
        Object[] values = {null, "ünïcødé", new byte[0], Integer.MIN_VALUE, Long.MAX_VALUE, (short) -3, (byte) -1,
            '\u20ac', false, Float.NaN, -0.0d};
        for (Object v : values) {
            ByteSink sink = new ByteSink(8);
            ValueCodec.write(sink, v);
            byte[] b = sink.toByteArray();
            Object back = ValueCodec.read(new ByteSource(b, 0, b.length), LIMITS, "v");
            assertThat(back).as("value %s", v).isEqualTo(v);
        }
    }

    @Test
    void classOutsideAllowList_isRejectedBeforeReadObject() throws Exception {
        Gadget.readObjectRan = false;
        byte[] b = batch(EventCodec.encodePut("c", new Element("g", new Gadget("x"))),
                EventCodec.encodePut("c", new Element("ok", "fine")));
        DecodedBatch d = EventDecoder.decodeBatch(b, 0, b.length, LIMITS);
        assertThat(Gadget.readObjectRan).isFalse();
        assertThat(d.events()).as("the rejected put is replaced, in place, by an invalidation of its key")
                .extracting(ReplicationEvent::op, ReplicationEvent::key)
                .containsExactly(tuple(Op.INVALIDATE, "g"), tuple(Op.PUT, "ok"));
        assertThat(d.rejections()).hasSize(1);
        assertThat(d.rejectionOf(d.events().get(0))).isSameAs(d.rejections().get(0));
        assertThat(d.rejectionOf(d.events().get(1))).isNull();
        assertThat(d.rejections().get(0).cacheName()).isEqualTo("c");
        assertThat(d.rejections().get(0).op()).isEqualTo(Op.PUT);
        assertThat(d.rejections().get(0).rejectedClass()).isEqualTo(Gadget.class.getName());
        assertThat(d.rejections().get(0).reason()).hasMessageContaining("allowedClasses")
                .hasMessageContaining(Gadget.class.getName());
    }

    @Test
    void aValueWhoseClassIsMissingHere_orAnUndecodableKey_isReplacedByAnInvalidationOfThatKeyOnly() throws Exception {
        // an allowed class this node cannot load (application version skew): the stream names AllowedValuX
        byte[] put = EventCodec.encodePut("c", new Element("k", new AllowedValue("x", 1)));
        byte[] key = EventCodec.encodeKey(Op.REMOVE, "c", new AllowedValue("y", 2));
        for (byte[] ev : List.of(put, key)) {
            String text = new String(ev, StandardCharsets.ISO_8859_1);
            int at = text.indexOf("contract.AllowedValue") + "contract.AllowedValu".length();
            ev[at] = 'X';
        }
        CodecLimits limits = new CodecLimits(1 << 20, 20, 1000, 10_000,
                AllowList.withDefaults(List.of("io.ehrelay.contract.*")));
        byte[] b = batch(put, key, EventCodec.encodePut("c", new Element("ok", "fine")));
        DecodedBatch d = EventDecoder.decodeBatch(b, 0, b.length, limits);
        assertThat(d.events()).extracting(ReplicationEvent::op, ReplicationEvent::key)
                .containsExactly(tuple(Op.INVALIDATE, "k"), tuple(Op.INVALIDATE, null), tuple(Op.PUT, "ok"));
        assertThat(d.events().get(1).keyHash()).as("the undecodable key is still named by its bytes' hash")
                .isNotZero();
        assertThat(d.rejections()).extracting(Rejection::op).containsExactly(Op.PUT, Op.REMOVE);
        assertThat(d.rejections().get(0).reason()).hasMessageContaining("not found");
        assertThat(d.rejections().get(0).rejectedClass()).as("allowed, just missing").isNull();
    }

    @Test
    void presets_admitTheirFrameworksDataClasses_andNothingWider() {
        AllowList list = AllowList.withDefaults(List.of("@hibernate5", "@spring", "com.acme.**"));
        assertThat(list.allows("org.hibernate.cache.internal.CacheKeyImplementation")).isTrue();
        assertThat(list.allows("org.hibernate.cache.spi.support.AbstractReadWriteAccess$Item")).isTrue();
        assertThat(list.allows("org.hibernate.type.LongType")).isTrue();
        assertThat(list.allows("org.springframework.cache.interceptor.SimpleKey")).isTrue();
        assertThat(list.allows("com.acme.shop.Order")).isTrue();
        // the classes of the known gadget chains through Hibernate's ComponentType stay out
        assertThat(list.allows("org.hibernate.tuple.component.PojoComponentTuplizer")).isFalse();
        assertThat(list.allows("org.hibernate.property.access.spi.GetterMethodImpl")).isFalse();
        assertThat(list.allows("org.hibernate.engine.spi.TypedValue")).isTrue();
        assertThat(list.allows("org.hibernate.engine.spi.SessionImpl")).isFalse();
        assertThat(list.allows("org.springframework.beans.factory.ObjectFactory")).isFalse();
        assertThatThrownBy(() -> AllowList.withDefaults(List.of("@hibernate4")))
                .hasMessageContaining("unknown preset @hibernate4").hasMessageContaining("@hibernate5, @spring");
    }

    @Test
    void theAdviceNamesTheSmallestAddition_andRepeatsWhatIsConfigured() {
        AllowList list = AllowList.withDefaults(List.of("com.acme.**"));
        assertThat(list.additionFor("org.hibernate.cache.spi.QueryKey")).isEqualTo("@hibernate5");
        assertThat(list.additionFor("com.other.Thing")).isEqualTo("com.other.Thing");
        assertThat(list.settingWith(List.of("@spring"))).isEqualTo("allowedClasses=com.acme.**|@spring");
        assertThat(AllowList.withDefaults(List.of("@hibernate5")).additionFor("org.hibernate.cache.spi.QueryKey"))
                .as("a preset already configured is not offered again").isEqualTo("org.hibernate.cache.spi.QueryKey");
    }

    @Test
    void allowListPatterns_matchExactPackageAndSubpackages() {
        AllowList list = AllowList.of(List.of("com.acme.Order", "com.shop.*", "org.lib.**"));
        assertThat(list.allows("com.acme.Order")).isTrue();
        assertThat(list.allows("com.acme.OrderLine")).isFalse();
        assertThat(list.allows("com.shop.Cart")).isTrue();
        assertThat(list.allows("com.shop.sub.Cart")).isFalse();
        assertThat(list.allows("org.lib.deep.Thing")).isTrue();
        assertThat(list.allows(int[].class)).isTrue();
        assertThat(AllowList.withDefaults(List.of()).allows(String[].class)).isTrue();
        assertThat(AllowList.withDefaults(List.of()).allows(Gadget[].class)).isFalse();
    }

    @Test
    void deepObjectGraph_isRejectedByDepthLimit() throws Exception {
        List<Object> root = SerializationGuardTest.nestedLists(100);
        CodecLimits shallow = new CodecLimits(1 << 20, 20, 1000, 10_000, LIMITS.allowList());
        byte[] b = batch(EventCodec.encodePut("c", new Element("k", (Serializable) root)));
        DecodedBatch d = EventDecoder.decodeBatch(b, 0, b.length, shallow);
        assertThat(d.events()).extracting(ReplicationEvent::op).containsExactly(Op.INVALIDATE);
        assertThat(d.rejections().get(0).reason()).hasMessageContaining("maxObjectDepth");
    }

    @Test
    void hugeArrayInSerializedValue_isRejectedByArrayLimit() throws Exception {
        CodecLimits small = new CodecLimits(1 << 20, 20, 100, 10_000, LIMITS.allowList());
        byte[] b = batch(EventCodec.encodePut("c", new Element("k", new ArrayList<>(List.of(new long[1000])))));
        DecodedBatch d = EventDecoder.decodeBatch(b, 0, b.length, small);
        assertThat(d.rejections().get(0).reason()).hasMessageContaining("maxArrayLength");
    }

    @Test
    void serializedArrayAnnouncing2pow31Elements_isRejectedWithoutAllocating() throws Exception {
        // a serialized long[] whose length field is patched to Integer.MAX_VALUE
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        try (ObjectOutputStream oos = new ObjectOutputStream(raw)) {
            oos.writeObject(new long[] {1, 2, 3});
        }
        byte[] ser = raw.toByteArray();
        ByteBuffer.wrap(ser).putInt(ser.length - 3 * 8 - 4, Integer.MAX_VALUE);
        ByteSink event = new ByteSink(64);
        event.writeInt(0);
        event.write(Op.PUT.code());
        event.writeShort(1);
        event.write('c');
        ValueCodec.write(event, "k");
        event.write(ValueCodec.SERIALIZED);
        event.writeInt(ser.length);
        event.write(ser, 0, ser.length);
        for (int i = 0; i < 5; i++) {
            event.writeLong(0);
        }
        event.writeInt(0);
        event.writeInt(0);
        event.write(0);
        event.putInt(0, event.position() - 4);
        byte[] b = batch(event.toByteArray());
        long before = usedHeap();
        DecodedBatch d = EventDecoder.decodeBatch(b, 0, b.length, LIMITS);
        assertThat(d.events()).extracting(ReplicationEvent::op).containsExactly(Op.INVALIDATE);
        assertThat(d.rejections().get(0).reason()).hasMessageContaining("maxArrayLength");
        assertThat(usedHeap() - before).as("heap grown while rejecting").isLessThan(256L << 20);
    }

    private static long usedHeap() {
        Runtime r = Runtime.getRuntime();
        return r.totalMemory() - r.freeMemory();
    }

    @Test
    void batchHeader_carriesStreamSequenceAndFlags_andRejectsImpossibleOnes() throws Exception {
        byte[] event = EventCodec.encodePut("c", new Element("k", "v"));
        ByteSink sink = new ByteSink(64);
        sink.write(EventCodec.batchHeader(0), 0, EventCodec.BATCH_HEADER_BYTES);
        sink.write(event, 0, event.length);
        EventCodec.putBatchHeader(sink, 0, 1, EventCodec.FLAG_LOST, 42L, 7L);
        byte[] b = sink.toByteArray();
        DecodedBatch d = EventDecoder.decodeBatch(b, 0, b.length, LIMITS);
        assertThat(d.stream()).isEqualTo(42L);
        assertThat(d.seq()).isEqualTo(7L);
        assertThat(d.flags()).isEqualTo(EventCodec.FLAG_LOST);
        assertThat(d.events()).hasSize(1);
        byte[] noSeq = b.clone();
        ByteBuffer.wrap(noSeq).putLong(14, 0L); // a live batch of a stream numbered 0
        assertThatThrownBy(() -> decode(noSeq)).isInstanceOf(MalformedFrameException.class)
                .hasMessageContaining("sequence number");
        byte[] flagsWithoutStream = batch(event);
        flagsWithoutStream[5] = (byte) EventCodec.FLAG_LOST;
        assertThatThrownBy(() -> decode(flagsWithoutStream)).isInstanceOf(MalformedFrameException.class);
        byte[] snapshot = EventCodec.snapshotBatch(List.of(event), event.length, 42L, 0L);
        assertThat(EventDecoder.decodeBatch(snapshot, 0, snapshot.length, LIMITS).flags())
                .isEqualTo(EventCodec.FLAG_SNAPSHOT);
    }

    @Test
    void lengthFieldsPastTheFrame_areRejected() throws Exception {
        byte[] good = batch(EventCodec.encodePut("c", new Element("k", new byte[100])));
        byte[] hugeCount = good.clone();
        ByteBuffer.wrap(hugeCount).putInt(1, Integer.MAX_VALUE);
        assertThatThrownBy(() -> decode(hugeCount)).isInstanceOf(MalformedFrameException.class)
                .hasMessageContaining("event count");
        byte[] hugeEvent = good.clone();
        ByteBuffer.wrap(hugeEvent).putInt(EventCodec.BATCH_HEADER_BYTES, Integer.MAX_VALUE);
        assertThatThrownBy(() -> decode(hugeEvent)).isInstanceOf(MalformedFrameException.class);
        byte[] negative = good.clone();
        ByteBuffer.wrap(negative).putInt(EventCodec.BATCH_HEADER_BYTES, -1);
        assertThatThrownBy(() -> decode(negative)).isInstanceOf(MalformedFrameException.class);
        CodecLimits tiny = new CodecLimits(64, 10, 10, 10, LIMITS.allowList());
        assertThatThrownBy(() -> EventDecoder.decodeBatch(good, 0, good.length, tiny))
                .hasMessageContaining("maxFrameBytes");
    }

    @Test
    void everyTruncation_isRejectedCleanly() throws Exception {
        byte[] good = batch(EventCodec.encodePut("c", new Element("k", new HashMap<>(Map.of("a", 1)))),
                EventCodec.encodeKey(Op.REMOVE, "c", "k"));
        assertThat(decode(good)).hasSize(2);
        for (int len = 0; len < good.length; len++) {
            final int cut = len;
            assertThatThrownBy(() -> EventDecoder.decodeBatch(good, 0, cut, LIMITS))
                    .as("truncated to %d bytes", cut).isInstanceOf(MalformedFrameException.class);
        }
    }

    @Test
    void fuzz_randomAndMutatedBatches_neverThrowAnythingButMalformedFrame() throws Exception {
        Random random = new Random(20261122);
        byte[] good = batch(EventCodec.encodePut("cache", new Element("key", "value")),
                EventCodec.encodePut("cache", new Element(1, new ArrayList<>(List.of(1, "two")))),
                EventCodec.encodeKey(Op.INVALIDATE, "cache", 5), EventCodec.encodeRemoveAll("cache"));
        int decoded = 0;
        int rejected = 0;
        for (int i = 0; i < 100_000; i++) {
            byte[] input;
            if (i % 2 == 0) {
                input = good.clone();
                int flips = 1 + random.nextInt(4);
                for (int f = 0; f < flips; f++) {
                    input[random.nextInt(input.length)] = (byte) random.nextInt(256);
                }
            } else {
                input = new byte[random.nextInt(64)];
                random.nextBytes(input);
                if (input.length > 0) {
                    input[0] = 1;
                }
            }
            try {
                EventDecoder.decodeBatch(input, 0, input.length, LIMITS);
                decoded++;
            } catch (MalformedFrameException e) {
                rejected++;
            }
        }
        assertThat(decoded + rejected).isEqualTo(100_000);
        assertThat(rejected).isPositive();
        assertThat(Gadget.readObjectRan).isFalse();
    }

    @Test
    void notSerializableValue_failsOnEncodeNotOnTheWire() {
        Element e = new Element("k", new Object());
        assertThatThrownBy(() -> EventCodec.encodePut("c", e)).isInstanceOf(IOException.class);
    }
}
