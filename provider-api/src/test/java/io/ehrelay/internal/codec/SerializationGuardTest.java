package io.ehrelay.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.URI;
import java.nio.ByteBuffer;
import java.sql.Timestamp;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZonedDateTime;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Date;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.contract.Gadget;
import io.ehrelay.spi.MalformedFrameException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The deserialization guard on both of its paths: with the JVM's own serialization filter set as well (Java 9+,
 * 8u121+; what every supported JVM has), and with the stream check alone (what a Java 8 without JEP 290 would
 * get). The allow-list, the limits and the messages must hold on both.
 */
class SerializationGuardTest {

    private static final CodecLimits LIMITS = CodecLimits.defaults();

    @AfterEach
    void restore() {
        ValueCodec.useJdkFilter = true;
    }

    private static byte[] encode(Object v) throws IOException {
        ByteSink sink = new ByteSink(64);
        ValueCodec.write(sink, v);
        return sink.toByteArray();
    }

    private static Object decode(byte[] b, CodecLimits limits) throws MalformedFrameException {
        return ValueCodec.read(new ByteSource(b, 0, b.length), limits, "value");
    }

    private static byte[] serialized(Object v) throws IOException {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        try (ObjectOutputStream oos = new ObjectOutputStream(raw)) {
            oos.writeObject(v);
        }
        return raw.toByteArray();
    }

    /** A SERIALIZED value record around raw serialization bytes. */
    private static byte[] asValue(byte[] ser) {
        ByteSink sink = new ByteSink(ser.length + 8);
        sink.write(ValueCodec.SERIALIZED);
        sink.writeInt(ser.length);
        sink.write(ser, 0, ser.length);
        return sink.toByteArray();
    }

    /** Lists nested {@code depth} deep: each holds the next. */
    static List<Object> nestedLists(int depth) {
        List<Object> root = new ArrayList<>();
        List<Object> current = root;
        for (int i = 0; i < depth; i++) {
            List<Object> next = new ArrayList<>();
            current.add(next);
            current = next;
        }
        return root;
    }

    private static List<Object> commonValues() {
        Map<String, Object> nested = new LinkedHashMap<>();
        nested.put("list", new ArrayList<>(Arrays.asList(1, "two", 3.0, null)));
        nested.put("tree", new TreeMap<>(Collections.singletonMap("k", new BigDecimal("12.50"))));
        EnumMap<DayOfWeek, Integer> days = new EnumMap<>(DayOfWeek.class);
        days.put(DayOfWeek.MONDAY, 1);
        ConcurrentHashMap<String, Long> chm = new ConcurrentHashMap<>();
        chm.put("a", 1L);
        return Arrays.asList(new HashMap<>(Collections.singletonMap("k", "v")), nested,
                new HashSet<>(Arrays.asList("a", "b")), new LinkedList<>(Arrays.asList(1, 2)),
                new ArrayDeque<>(Arrays.asList("x", "y")), chm, new CopyOnWriteArrayList<>(Arrays.asList(1, 2)),
                days, DayOfWeek.FRIDAY, new BigInteger("123456789012345678901234567890"), new BigDecimal("-0.001"),
                UUID.randomUUID(), new Date(12345L), new Timestamp(99L), Locale.GERMANY,
                URI.create("http://example.invalid/x?y=1"), Instant.ofEpochSecond(1, 2), LocalDate.of(2026, 11, 23),
                Duration.ofMillis(1500), ZonedDateTime.parse("2026-11-23T15:00:00+01:00[Europe/Paris]"),
                new String[] {"a", null, "c"}, new int[][] {{1, 2}, {3}}, new Object[] {1L, "s", new long[] {5}},
                Collections.unmodifiableList(new ArrayList<>(Arrays.asList(1, 2))), List.of(1, 2, 3), Map.of("k", 1),
                Arrays.asList("fixed", "size"), Collections.emptyList(), new Serializable[] {"s", 1});
    }

    @ParameterizedTest(name = "jdk filter {0}")
    @ValueSource(booleans = {true, false})
    void everyDefaultValueType_roundTrips(boolean jdkFilter) throws Exception {
        ValueCodec.useJdkFilter = jdkFilter;
        for (Object v : commonValues()) {
            Object back = decode(encode(v), LIMITS);
            if (v instanceof Object[]) {
                assertThat(Arrays.deepEquals((Object[]) back, (Object[]) v)).as("value %s", v).isTrue();
            } else if (v instanceof ArrayDeque) {
                assertThat(new ArrayList<>((ArrayDeque<?>) back)).isEqualTo(new ArrayList<>((ArrayDeque<?>) v));
            } else {
                assertThat(back).as("value %s", v).isEqualTo(v);
            }
        }
    }

    @ParameterizedTest(name = "jdk filter {0}")
    @ValueSource(booleans = {true, false})
    void classOutsideTheAllowList_nestedInAnAllowedCollection_isRefusedBeforeReadObject(boolean jdkFilter)
            throws Exception {
        ValueCodec.useJdkFilter = jdkFilter;
        Gadget.readObjectRan = false;
        byte[] b = encode(new ArrayList<>(Arrays.asList("ok", new HashMap<>(Collections.singletonMap("g",
                new Gadget("x"))))));
        assertThatThrownBy(() -> decode(b, LIMITS)).isInstanceOfSatisfying(RejectedClassException.class,
                e -> assertThat(e.className()).isEqualTo(Gadget.class.getName()))
                .hasMessageContaining("allowedClasses").hasMessageContaining("add " + Gadget.class.getName() + " to");
        assertThat(Gadget.readObjectRan).isFalse();
    }

    @ParameterizedTest(name = "jdk filter {0}")
    @ValueSource(booleans = {true, false})
    void dynamicProxies_areRefused(boolean jdkFilter) throws Exception {
        ValueCodec.useJdkFilter = jdkFilter;
        Object proxy = Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Serializable.class},
                new NullHandler());
        byte[] b = encode(new ArrayList<>(Collections.singletonList(proxy)));
        assertThatThrownBy(() -> decode(b, LIMITS)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("proxy");
    }

    @ParameterizedTest(name = "jdk filter {0}")
    @ValueSource(booleans = {true, false})
    void limits_depthArrayLengthAndReferences_holdOnBothPaths(boolean jdkFilter) throws Exception {
        ValueCodec.useJdkFilter = jdkFilter;
        List<Object> root = nestedLists(100);
        CodecLimits shallow = new CodecLimits(1 << 20, 20, 1000, 10_000, LIMITS.allowList());
        assertThatThrownBy(() -> decode(encode(root), shallow)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("maxObjectDepth=20");

        CodecLimits shortArrays = new CodecLimits(1 << 20, 20, 100, 10_000, LIMITS.allowList());
        assertThatThrownBy(() -> decode(encode(new long[101]), shortArrays))
                .isInstanceOf(RejectedClassException.class).hasMessageContaining("maxArrayLength=100");
        assertThat((long[]) decode(encode(new long[100]), shortArrays)).hasSize(100);

        List<String> many = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            many.add("s" + i);
        }
        CodecLimits fewRefs = new CodecLimits(1 << 20, 20, 10_000, 100, LIMITS.allowList());
        assertThatThrownBy(() -> decode(encode(many), fewRefs)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("maxObjectReferences=100");
    }

    /**
     * Sets that share their members level by level (each level holds the next level's two sets, which the level
     * beside it holds too): under 2 KB at depth 25, well within every other limit, yet reading it would call
     * {@code hashCode} on 2^25 sets (seconds of CPU). Refused by its hashing work before anything is created;
     * the same number of objects nested without sharing, and ordinary nested maps, pass.
     */
    @ParameterizedTest(name = "jdk filter {0}")
    @ValueSource(booleans = {true, false})
    void nestedSetBomb_isRefusedByItsHashingWork_ordinaryNestingPasses(boolean jdkFilter) throws Exception {
        ValueCodec.useJdkFilter = jdkFilter;
        byte[] bomb = encode(SetBombs.bomb(25));
        assertThat(bomb.length).as("a small value").isLessThan(2048);
        assertThatThrownBy(() -> decode(bomb, LIMITS)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("maxHashWork=" + CodecLimits.DEFAULT_MAX_HASH_WORK);

        Object shallowBomb = SetBombs.bomb(10); // about 2^12 objects of hashing: passes, and reads back the same
        // (compared by hash code: the original's sets were changed after being added, so its equals misleads)
        assertThat(decode(encode(shallowBomb), LIMITS).hashCode()).isEqualTo(shallowBomb.hashCode());

        Map<String, Map<String, Set<String>>> nested = new HashMap<>();
        for (int i = 0; i < 200; i++) {
            Map<String, Set<String>> inner = new HashMap<>();
            for (int j = 0; j < 20; j++) {
                inner.put("k" + j, new HashSet<>(Arrays.asList("a" + i, "b" + j, "c")));
            }
            nested.put("m" + i, inner);
        }
        assertThat(decode(encode(nested), LIMITS)).isEqualTo(nested);

        CodecLimits lowWork = new CodecLimits(1 << 26, 64, 1 << 20, 1_000_000, 1_000, LIMITS.allowList());
        assertThatThrownBy(() -> decode(encode(nested), lowWork)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("maxHashWork=1000");
    }

    @ParameterizedTest(name = "jdk filter {0}")
    @ValueSource(booleans = {true, false})
    void arrayClaiming2pow31Elements_isRefusedWithoutAllocating(boolean jdkFilter) throws Exception {
        ValueCodec.useJdkFilter = jdkFilter;
        byte[] ser = serialized(new long[] {1, 2, 3});
        ByteBuffer.wrap(ser).putInt(ser.length - 3 * 8 - 4, Integer.MAX_VALUE);
        assertThatThrownBy(() -> decode(asValue(ser), LIMITS)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("maxArrayLength");
        // under the limit but longer than what the stream holds: malformed, nothing allocated for it
        ByteBuffer.wrap(ser).putInt(ser.length - 3 * 8 - 4, 1_000_000);
        assertThatThrownBy(() -> decode(asValue(ser), LIMITS)).isInstanceOf(MalformedFrameException.class);
    }

    @ParameterizedTest(name = "jdk filter {0}")
    @ValueSource(booleans = {true, false})
    void everyTruncationAndMutation_isRefusedCleanly(boolean jdkFilter) throws Exception {
        ValueCodec.useJdkFilter = jdkFilter;
        Object[] sample = {new Object[] {"a", new String[] {"b", "c"}, new int[] {1, 2}}, UUID.randomUUID(),
            new BigDecimal("3.14159"), DayOfWeek.MONDAY, new Date(1L)};
        byte[] ser = serialized(sample);
        for (int cut = 0; cut < ser.length; cut++) {
            int n = cut;
            assertThatThrownBy(() -> decode(asValue(Arrays.copyOf(ser, n)), LIMITS)).as("cut at %d", cut)
                    .isInstanceOf(MalformedFrameException.class);
        }
        Random random = new Random(17);
        int decoded = 0;
        for (int i = 0; i < 20_000; i++) {
            byte[] m = ser.clone();
            for (int k = 1 + random.nextInt(4); k > 0; k--) {
                m[random.nextInt(m.length)] = (byte) random.nextInt(256);
            }
            try {
                decode(asValue(m), LIMITS);
                decoded++;
            } catch (MalformedFrameException e) {
                // refused: the only allowed outcome besides decoding
            }
        }
        assertThat(decoded).as("some mutations only change values").isPositive().isLessThan(20_000);
    }

    @ParameterizedTest(name = "jdk filter {0}")
    @ValueSource(booleans = {true, false})
    void trailingBytesAfterTheObject_areRefused(boolean jdkFilter) throws Exception {
        ValueCodec.useJdkFilter = jdkFilter;
        byte[] ser = serialized("x");
        byte[] longer = Arrays.copyOf(ser, ser.length + 1);
        longer[ser.length] = 0x70; // TC_NULL
        assertThatThrownBy(() -> decode(asValue(longer), LIMITS)).isInstanceOf(MalformedFrameException.class);
    }

    @Test
    void jdkFilterBridge_worksForAnyInterfaceShapedLikeTheJdks() throws Exception {
        // the Java 8 filter (sun.misc.ObjectInputFilter) has the same shape as Java 9's; the bridge only needs
        // the shape, checked here with a stand-in of it
        List<String> reasons = new ArrayList<>();
        List<Class<?>> admitted = new ArrayList<>();
        Object filter = SerializationGuard.jdkFilter(FakeFilter.class, LIMITS, Collections.emptyList(), 100,
                (cls, why) -> reasons.add(cls + ": " + why), admitted::add);
        FakeFilter f = (FakeFilter) filter;
        assertThat(f.checkInput(new FakeInfo(String.class, 1, -1, 1, 10))).isEqualTo(FakeFilter.Status.ALLOWED);
        assertThat(f.checkInput(new FakeInfo(null, 1, -1, 1, 10))).isEqualTo(FakeFilter.Status.UNDECIDED);
        assertThat(f.checkInput(new FakeInfo(Gadget.class, 1, -1, 1, 10))).isEqualTo(FakeFilter.Status.REJECTED);
        assertThat(f.checkInput(new FakeInfo(null, 1, -1, 1, 101))).isEqualTo(FakeFilter.Status.REJECTED);
        assertThat(f.checkInput(new FakeInfo(null, 65, -1, 1, 10))).isEqualTo(FakeFilter.Status.REJECTED);
        assertThat(reasons).hasSize(3);
        assertThat(admitted).as("classes let through, told before their readObject").containsExactly(String.class);
        assertThat(reasons.get(0)).startsWith(Gadget.class.getName() + ": class " + Gadget.class.getName());
        assertThat(reasons.get(1)).startsWith("null: serialized graph of more than 100 bytes");
        assertThat(reasons.get(2)).contains("maxObjectDepth=64");
        assertThat(SerializationGuard.jdkFilterInterface().getName()).isEqualTo("java.io.ObjectInputFilter");
    }

    private static final class NullHandler implements InvocationHandler, Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) {
            return null;
        }
    }

    /** A stand-in with the shape of the JDK's serialization filter. */
    public interface FakeFilter {
        enum Status { UNDECIDED, ALLOWED, REJECTED }

        interface FilterInfo {
            Class<?> serialClass();
            long arrayLength();
            long depth();
            long references();
            long streamBytes();
        }

        Status checkInput(FilterInfo info);
    }

    private static final class FakeInfo implements FakeFilter.FilterInfo {
        private final Class<?> type;
        private final long depth;
        private final long arrayLength;
        private final long references;
        private final long bytes;

        FakeInfo(Class<?> type, long depth, long arrayLength, long references, long bytes) {
            this.type = type;
            this.depth = depth;
            this.arrayLength = arrayLength;
            this.references = references;
            this.bytes = bytes;
        }

        @Override public Class<?> serialClass() { return type; }
        @Override public long arrayLength() { return arrayLength; }
        @Override public long depth() { return depth; }
        @Override public long references() { return references; }
        @Override public long streamBytes() { return bytes; }
    }
}
