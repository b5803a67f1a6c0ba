package io.ehrelay.internal.engine;

import java.nio.ByteBuffer;
import java.util.Arrays;

import io.ehrelay.spi.Batch;

/**
 * One lane's record, while it builds a batch, of the {@code byte[]} values whose bytes the batch holds and that
 * the transport may keep by reference instead of a copy ({@link io.ehrelay.spi.Transport#sendsValuesByReference()}):
 * values of at least {@link #MIN_BYTES} bytes, where their bytes start in the batch. Reused batch after batch;
 * one thread at a time.
 */
final class ValueRefs {

    /** Smaller values are copied with the batch: a reference would save less than it costs to write apart. */
    static final int MIN_BYTES = 1024;

    private int[] at = new int[16];
    private byte[][] values = new byte[16][];
    private int count;

    /** Records {@code value}, whose bytes start at {@code position} in the batch, when it is large enough. */
    void add(int position, byte[] value) {
        if (value.length < MIN_BYTES) {
            return;
        }
        if (count == at.length) {
            at = Arrays.copyOf(at, count * 2);
            values = Arrays.copyOf(values, count * 2);
        }
        at[count] = position;
        values[count++] = value;
    }

    /** The batch of {@code bytes} naming the values recorded, which are forgotten here (the batch holds them). */
    Batch batch(ByteBuffer bytes, int eventCount) {
        Batch b = count == 0 ? new Batch(bytes, eventCount)
                : new Batch(bytes, eventCount, Arrays.copyOf(at, count), Arrays.copyOf(values, count), count);
        clear();
        return b;
    }

    /** Forgets what was recorded (and lets go of the arrays). */
    void clear() {
        Arrays.fill(values, 0, count, null);
        count = 0;
    }
}
