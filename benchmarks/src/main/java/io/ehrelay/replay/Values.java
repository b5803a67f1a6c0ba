package io.ehrelay.replay;

import java.util.Arrays;
import java.util.Random;

/**
 * The replay's element values: every value of a given size is a fixed pseudo-random block with its key
 * stamped into the first and last four bytes, so each value is distinct, cheap to make, and the reader can
 * check any of them byte for byte.
 */
public final class Values {

    private final byte[] base;

    public Values(int size) {
        base = new byte[size];
        new Random(size).nextBytes(base);
    }

    public int size() {
        return base.length;
    }

    public byte[] make(int key) {
        byte[] v = base.clone();
        stamp(v, key);
        return v;
    }

    public boolean matches(int key, byte[] value) {
        if (value == null || value.length != base.length) {
            return false;
        }
        byte[] expected = make(key);
        return Arrays.equals(expected, value);
    }

    private static void stamp(byte[] v, int key) {
        for (int i = 0; i < 4 && i < v.length; i++) {
            v[i] = (byte) (key >>> (24 - 8 * i));
            v[v.length - 1 - i] = (byte) (key >>> (8 * i));
        }
    }
}
