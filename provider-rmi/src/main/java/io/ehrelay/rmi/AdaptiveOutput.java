package io.ehrelay.rmi;

import java.io.IOException;
import java.io.OutputStream;

/**
 * A buffered output stream that collects writes in a small buffer, moves to a borrowed large one when they
 * outgrow it, and gives the large one back on {@link #flush()} (RMI flushes once per call and per reply).
 * Not thread-safe (RMI writes a connection from one thread at a time).
 */
final class AdaptiveOutput extends OutputStream {
    private final OutputStream out;
    private final BufferedSockets.Activity activity;
    private byte[] small;
    private byte[] large;
    private byte[] buf;
    private int count;

    AdaptiveOutput(OutputStream out, BufferedSockets.Activity activity) {
        this.out = out;
        this.activity = activity;
    }

    private void drain() throws IOException {
        if (count > 0) {
            writeSocket(buf, 0, count);
            count = 0;
        }
    }

    private void writeSocket(byte[] b, int off, int len) throws IOException {
        try {
            out.write(b, off, len);
        } catch (IOException | RuntimeException e) {
            activity.failed();
            throw e;
        }
        activity.afterWrite();
    }

    /** Room for at least one more byte. */
    private void room(int wanted) throws IOException {
        if (buf == null) {
            if (small == null) {
                small = new byte[BufferedSockets.SMALL_BYTES];
            }
            buf = small;
        }
        if (count + wanted <= buf.length) {
            return;
        }
        if (buf != large) {
            large = BufferedSockets.Pool.take();
            System.arraycopy(buf, 0, large, 0, count);
            buf = large;
        }
        if (count == buf.length) {
            drain();
        }
    }

    @Override
    public synchronized void write(int b) throws IOException {
        room(1);
        buf[count++] = (byte) b;
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        if ((off | len | (off + len) | (b.length - (off + len))) < 0) {
            throw new IndexOutOfBoundsException();
        }
        if (len >= BufferedSockets.LARGE_BYTES) {
            drain();
            writeSocket(b, off, len);
            return;
        }
        while (len > 0) {
            room(len);
            int n = Math.min(len, buf.length - count);
            System.arraycopy(b, off, buf, count, n);
            count += n;
            off += n;
            len -= n;
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        drain();
        out.flush();
        if (large != null) {
            byte[] l = large;
            large = null;
            buf = small;
            BufferedSockets.Pool.give(l);
        }
    }

    /** Writes what is buffered and closes the socket's stream; a large buffer held is left to the collector. */
    @Override
    public synchronized void close() throws IOException {
        try {
            drain();
            out.flush();
        } finally {
            out.close();
        }
    }

    /** The buffer bytes this stream holds now (for tests). */
    synchronized int heldBytes() {
        return BufferedSockets.held(small, large, buf);
    }
}
