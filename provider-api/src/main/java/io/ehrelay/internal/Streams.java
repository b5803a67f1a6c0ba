package io.ehrelay.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/** Stream helpers that Java 8 lacks ({@code readAllBytes}, {@code readNBytes} are Java 9/11). Internal. */
public final class Streams {

    private Streams() {
    }

    /**
     * At most {@code max} bytes: fewer only when the stream ended. The buffer grows with what arrives, so a
     * large {@code max} allocates nothing up front.
     */
    public static byte[] readUpTo(InputStream in, int max) throws IOException {
        if (max < 0) {
            throw new IllegalArgumentException("max < 0: " + max);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(max, 8192));
        byte[] buf = new byte[Math.min(max, 8192)];
        int left = max;
        while (left > 0) {
            int n = in.read(buf, 0, Math.min(left, buf.length));
            if (n < 0) {
                break;
            }
            out.write(buf, 0, n);
            left -= n;
        }
        return out.toByteArray();
    }

    /** Reads into {@code b[off, off+len)} until it is full or the stream ends; the number of bytes read. */
    public static int readFully(InputStream in, byte[] b, int off, int len) throws IOException {
        int got = 0;
        while (got < len) {
            int n = in.read(b, off + got, len - got);
            if (n < 0) {
                break;
            }
            got += n;
        }
        return got;
    }

    /**
     * Exactly {@code n} bytes in an array of that size, allocated at once: for lengths the caller has already
     * bounded. Fewer (a shorter array) only when the stream ended first.
     */
    public static byte[] readExactly(InputStream in, int n) throws IOException {
        byte[] b = new byte[n];
        int got = readFully(in, b, 0, n);
        return got == n ? b : Arrays.copyOf(b, got);
    }
}
