package io.ehrelay.testing;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What ehrelay logs while a test runs, read from {@code System.err}, where slf4j-simple (the tests' binding, 1.6
 * and 1.7 alike) writes: {@link #start()} puts a copy of everything written there into a buffer, while it still
 * reaches the original stream; {@link #close()} puts the original back. Lines of other threads land in the buffer
 * too, so assertions look for the lines of the test's own CacheManager or property.
 */
public final class LogCapture implements AutoCloseable {

    private final PrintStream original;
    private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

    private LogCapture() {
        original = System.err;
        OutputStream tee = new OutputStream() {
            @Override
            public void write(int b) {
                synchronized (copy) {
                    copy.write(b);
                }
                original.write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                synchronized (copy) {
                    copy.write(b, off, len);
                }
                original.write(b, off, len);
            }

            @Override
            public void flush() {
                original.flush();
            }
        };
        System.setErr(new PrintStream(tee, true));
    }

    public static LogCapture start() {
        return new LogCapture();
    }

    /** The lines written so far that contain {@code text}. */
    public List<String> lines(String text) {
        String all;
        synchronized (copy) {
            all = new String(copy.toByteArray(), StandardCharsets.UTF_8);
        }
        List<String> out = new ArrayList<>();
        for (String line : all.split("\\R")) {
            if (line.contains(text)) {
                out.add(line);
            }
        }
        return out;
    }

    @Override
    public void close() {
        System.err.flush();
        System.setErr(original);
    }
}
