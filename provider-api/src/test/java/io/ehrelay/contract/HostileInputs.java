package io.ehrelay.contract;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.codec.EventDecoder;
import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.spi.Op;
import net.sf.ehcache.Element;

/**
 * Hostile batches for the fuzz tests of every transport: random bytes, truncated batches and batches whose
 * count or length fields lie (huge, negative, past the end), generated from a seed. Every input is checked
 * here to be one the codec rejects, so a test can require each one to be counted as malformed and none to
 * touch a cache.
 */
public final class HostileInputs {

    /** What the inputs were, by kind, for the test's report. */
    public static final class Tally {
        public int random;
        public int truncated;
        public int lyingFields;
        public int hugeCount;

        public int total() {
            return random + truncated + lyingFields + hugeCount;
        }

        @Override
        public String toString() {
            return total() + " inputs (" + random + " random, " + truncated + " truncated, " + lyingFields
                    + " with a lying length field, " + hugeCount + " announcing 2^31-1 events)";
        }
    }

    private static final CodecLimits LIMITS = CodecLimits.defaults();

    private HostileInputs() {
    }

    /** Valid batches the mutations start from: puts of strings and byte arrays, a remove, a removeAll. */
    private static List<byte[]> seeds() {
        try {
            List<byte[]> out = new ArrayList<>();
            out.add(EventCodec.singletonBatch(EventCodec.encodePut("async", new Element("k", "value"))));
            out.add(EventCodec.singletonBatch(EventCodec.encodePut("async", new Element(7L, new byte[200]))));
            List<byte[]> three = List.of(EventCodec.encodePut("async", new Element("a", "1")),
                    EventCodec.encodeKey(Op.REMOVE, "async", "b"),
                    EventCodec.encodeRemoveAll("async"));
            out.add(EventCodec.batch(three, three.stream().mapToInt(b -> b.length).sum()));
            return out;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether the codec rejects the batch as malformed (what every input here must be). */
    public static boolean rejected(byte[] batch) {
        try {
            EventDecoder.decodeBatch(batch, 0, batch.length, LIMITS);
            return false;
        } catch (MalformedFrameException e) {
            return true;
        }
    }

    /**
     * Hands {@code count} inputs to {@code sink}, each one the codec rejects; deterministic for a seed.
     *
     * @return what was generated
     */
    public static Tally generate(long seed, int count, Consumer<byte[]> sink) {
        Random random = new Random(seed);
        List<byte[]> seeds = seeds();
        Tally tally = new Tally();
        while (tally.total() < count) {
            byte[] base = seeds.get(random.nextInt(seeds.size()));
            byte[] input;
            int kind = random.nextInt(4);
            switch (kind) {
                case 0: // random bytes, sometimes behind a plausible version byte
                    input = new byte[1 + random.nextInt(300)];
                    random.nextBytes(input);
                    if (random.nextBoolean()) {
                        input[0] = (byte) EventCodec.FORMAT_VERSION;
                    }
                    break;
                case 1: // a valid batch cut short
                    input = Arrays.copyOf(base, 1 + random.nextInt(base.length - 1));
                    break;
                case 2: { // one 32-bit field past the header overwritten with a lie
                    input = base.clone();
                    int at = EventCodec.BATCH_HEADER_BYTES + random.nextInt(Math.max(1, input.length - 4
                            - EventCodec.BATCH_HEADER_BYTES));
                    int[] lies = {Integer.MAX_VALUE, -1, Integer.MIN_VALUE, input.length, 1 << 30};
                    ByteBuffer.wrap(input).putInt(at, lies[random.nextInt(lies.length)]);
                    break;
                }
                default: // a header announcing 2^31-1 events, followed by little
                    input = base.clone();
                    ByteBuffer.wrap(input).putInt(1, Integer.MAX_VALUE);
                    break;
            }
            if (!rejected(input)) {
                continue; // a lie that happened to stay well-formed (e.g. inside a value): not hostile enough
            }
            switch (kind) {
                case 0:
                    tally.random++;
                    break;
                case 1:
                    tally.truncated++;
                    break;
                case 2:
                    tally.lyingFields++;
                    break;
                default:
                    tally.hugeCount++;
                    break;
            }
            sink.accept(input);
        }
        return tally;
    }
}
