package io.ehrelay.internal.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import io.ehrelay.codec.RejectedClassException;
import io.ehrelay.spi.MalformedFrameException;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;

/**
 * The streaming walk of Java serialization: what the JDK writes is walked to its exact end, however the bytes
 * arrive, and what a limit refuses is refused before the bytes that would cost the reader are handed over.
 */
class SerialStreamWalkerTest {

    /** The stream's bytes, handed out in chunks of random sizes, counting how far the walker got. */
    static final class Chunks implements SerialStreamWalker.Input {
        final byte[] bytes;
        final Random random;
        int pos;

        Chunks(byte[] bytes, long seed) {
            this.bytes = bytes;
            this.random = new Random(seed);
        }

        @Override
        public int peek() {
            return pos < bytes.length ? bytes[pos] & 0xff : -1;
        }

        @Override
        public long read(int n) throws IOException {
            if (pos + n > bytes.length) {
                throw new EOFException("needs " + n + " bytes at " + pos);
            }
            long v = 0;
            for (int i = 0; i < n; i++) {
                v = v << 8 | (bytes[pos++] & 0xff);
            }
            return v;
        }

        @Override
        public long skipSome(long n) throws IOException {
            if (pos >= bytes.length) {
                throw new EOFException("at the end");
            }
            int k = (int) Math.min(n, Math.min(bytes.length - pos, 1 + random.nextInt(3000)));
            pos += k;
            return k;
        }
    }

    private static byte[] serialized(Object... objects) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeInt(42); // block data before the objects, as RMI's call header
            for (Object o : objects) {
                out.writeObject(o);
            }
            out.writeLong(7);
        }
        return bytes.toByteArray();
    }

    /** Walks {@code stream} (after its 4-byte header) to its end; returns the number of steps taken. */
    private static int walk(byte[] stream, CodecLimits limits, long seed) throws Exception {
        Chunks in = new Chunks(stream, seed);
        in.read(4);
        SerialStreamWalker w = new SerialStreamWalker(in, limits, "a test stream");
        int steps = 0;
        while (w.step()) {
            steps++;
        }
        assertThat(in.pos).as("walked to the end").isEqualTo(stream.length);
        assertThat(w.atTopLevel()).isTrue();
        return steps;
    }

    enum Colour { RED }

    static final class Holder implements Serializable {
        private static final long serialVersionUID = 1L;
        final Object[] things;
        final int number = 3;
        transient Object skipped = "x";

        Holder(Object... things) {
            this.things = things;
        }

        private void writeObject(ObjectOutputStream out) throws IOException {
            out.defaultWriteObject();
            out.writeUTF("extra");
            out.writeObject(new byte[5000]);
        }
    }

    @Test
    void whatTheJdkWrites_isWalkedToItsEnd_inChunksOfAnySize() throws Exception {
        Map<String, Object> map = new HashMap<>();
        map.put("a", Arrays.asList(1, 2L, 3.0));
        map.put("b", new TreeMap<>(Map.of("x", new int[] {1, 2, 3})));
        Set<Object> set = new HashSet<>(Arrays.asList("s", 9, Colour.RED));
        String big = "y".repeat(70_000); // a long string
        Object[] shared = {set, set, map};
        byte[] stream = serialized(map, set, shared, new Holder(map, null, Colour.RED, String.class),
                new Element("k", new byte[100_000]), new LinkedHashMap<>(Map.of(1, 2)), big, null,
                new ArrayList<>(List.of(new char[] {'a'}, new long[0], new String[] {"p", "q"})));
        for (long seed = 0; seed < 50; seed++) {
            assertThat(walk(stream, CodecLimits.defaults(), seed)).isPositive();
        }
    }

    @Test
    void aNestedSetBomb_isRefused_beforeItsLastBytes() throws Exception {
        byte[] stream = serialized(SetBombs.bomb(27));
        Chunks in = new Chunks(stream, 1);
        in.read(4);
        SerialStreamWalker w = new SerialStreamWalker(in, CodecLimits.defaults(), "a call");
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> {
            while (w.step()) {
                // walking
            }
        }).isInstanceOf(RejectedClassException.class).hasMessageContaining("maxHashWork=500000");
        assertThat(in.pos).as("refused before the end of the stream").isLessThan(stream.length);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0)).as("arithmetic, not hashing")
                .isLessThan(2000);
        // the same depth of sets without sharing is fine
        assertThat(walk(serialized(chain(27)), CodecLimits.defaults(), 3)).isPositive();
    }

    @Test
    void theOtherLimits_depthArraysReferences_refuse() throws Exception {
        CodecLimits tight = new CodecLimits(1 << 20, 10, 100, 50, 500_000, CodecLimits.defaults().allowList());
        Object deep = "leaf";
        for (int i = 0; i < 12; i++) {
            deep = new Object[] {deep};
        }
        byte[] deepStream = serialized(deep);
        assertThatThrownBy(() -> walk(deepStream, tight, 1)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("maxObjectDepth=10");
        byte[] longArray = serialized((Object) new String[101]);
        assertThatThrownBy(() -> walk(longArray, tight, 1)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("maxArrayLength=100");
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            many.add("s" + i);
        }
        byte[] manyStream = serialized(many);
        assertThatThrownBy(() -> walk(manyStream, tight, 1)).isInstanceOf(RejectedClassException.class)
                .hasMessageContaining("maxObjectReferences=50");
    }

    @Test
    void damagedStreams_areMalformed_notWalkedOn() throws Exception {
        byte[] good = serialized(new HashMap<>(Map.of("k", "v")));
        byte[] badHandle = good.clone();
        // a reference to a handle that does not exist, where the first object starts
        int at = indexOf(good, (byte) 0x73);
        byte[] withRef = Arrays.copyOf(good, at + 5);
        withRef[at] = 0x71;
        withRef[at + 1] = 0x00;
        withRef[at + 2] = 0x7e;
        withRef[at + 3] = 0x00;
        withRef[at + 4] = 0x55;
        assertThatThrownBy(() -> walk(withRef, CodecLimits.defaults(), 1)).isInstanceOf(MalformedFrameException.class)
                .hasMessageContaining("unknown handle");
        // an object where a class annotation holds more than a codebase
        badHandle[at] = 0x78;
        assertThatThrownBy(() -> walk(badHandle, CodecLimits.defaults(), 1))
                .isInstanceOf(MalformedFrameException.class);
    }

    /** Sets nested {@code depth} deep, each holding the next only: linear hashing. */
    private static Set<Object> chain(int depth) {
        Set<Object> root = new HashSet<>();
        Set<Object> s = root;
        for (int i = 0; i < depth; i++) {
            Set<Object> t = new HashSet<>();
            t.add("n" + i);
            s.add(t);
            s = t;
        }
        return root;
    }

    private static int indexOf(byte[] b, byte v) {
        for (int i = 4; i < b.length; i++) {
            if (b[i] == v) {
                return i;
            }
        }
        throw new AssertionError();
    }
}
