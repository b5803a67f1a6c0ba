package io.ehrelay.rmi;

import java.io.IOException;
import java.io.InputStream;

/**
 * A buffered input stream (with mark and reset, so RMI reads it without a buffer of its own) that fills a
 * small buffer while reads catch up with the peer, and a borrowed large one while data keeps coming: once
 * a read filled all the room it had, the next fill goes into the large buffer if the socket has more bytes
 * already. When it has none, the next read waits for the peer, so the large buffer goes back to the pool
 * first. Not thread-safe (like RMI's use of it: one reader at a time).
 */
final class AdaptiveInput extends InputStream {
    private final InputStream in;
    private final BufferedSockets.Activity activity;
    private byte[] small;
    private byte[] large;
    private byte[] buf;
    private int pos;
    private int count;
    private int markpos = -1;
    private int marklimit;
    /** Whether the last read from the socket filled all the room it was given: more is likely waiting. */
    private boolean streaming;
    private volatile boolean closed;

    AdaptiveInput(InputStream in, BufferedSockets.Activity activity) {
        this.in = in;
        this.activity = activity;
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("Stream closed");
        }
    }

    /**
     * Reads from the socket into the buffer; called when everything buffered was read. Keeps the bytes since
     * a valid mark. Into the large buffer when the socket has bytes waiting and the large buffer is held or
     * the last read filled all its room; else into the small one (giving the large one back).
     */
    private void fill() throws IOException {
        int keep = 0;
        boolean marked = markpos >= 0 && count - markpos < marklimit;
        if (marked) {
            keep = count - markpos;
        }
        boolean wantLarge = (large != null || streaming) && in.available() > 0;
        byte[] target;
        if (wantLarge || keep + 1 > BufferedSockets.SMALL_BYTES) {
            if (large == null) {
                large = BufferedSockets.Pool.take();
            }
            target = large;
        } else {
            if (small == null) {
                small = new byte[BufferedSockets.SMALL_BYTES];
            }
            target = small;
        }
        if (keep + 1 > target.length) {
            target = new byte[keep + BufferedSockets.SMALL_BYTES]; // a mark longer than the large buffer: a one-off buffer
        }
        if (keep > 0) {
            System.arraycopy(buf, markpos, target, 0, keep);
        }
        if (large != null && target != large) {
            BufferedSockets.Pool.give(large);
            large = null;
        }
        buf = target;
        pos = keep;
        count = keep;
        markpos = marked ? 0 : -1;
        int n = readSocket(buf, count, buf.length - count);
        if (n > 0) {
            streaming = n == buf.length - count;
            count += n;
        } else {
            streaming = false;
        }
    }

    private int readSocket(byte[] b, int off, int len) throws IOException {
        int n;
        try {
            activity.beforeRead();
            n = in.read(b, off, len);
        } catch (IOException | RuntimeException e) {
            activity.failed();
            throw e;
        }
        activity.afterRead(n);
        return n;
    }

    @Override
    public int read() throws IOException {
        ensureOpen();
        if (pos >= count) {
            fill();
            if (pos >= count) {
                return -1;
            }
        }
        return buf[pos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        ensureOpen();
        if ((off | len | (off + len) | (b.length - (off + len))) < 0) {
            throw new IndexOutOfBoundsException();
        }
        if (len == 0) {
            return 0;
        }
        int avail = count - pos;
        if (avail <= 0) {
            boolean direct = markpos < 0
                    && (large != null ? len >= BufferedSockets.LARGE_BYTES : len >= BufferedSockets.SMALL_BYTES && !streaming);
            if (direct) {
                // as large as the buffer (RMI's client reads 8 KiB at a time): straight into the caller's
                // array, until a read gets all it asked for (more is likely waiting: then fill() decides)
                int n = readSocket(b, off, len);
                streaming = n == len;
                return n;
            }
            fill();
            avail = count - pos;
            if (avail <= 0) {
                return -1;
            }
        }
        int n = Math.min(avail, len);
        System.arraycopy(buf, pos, b, off, n);
        pos += n;
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        ensureOpen();
        if (n <= 0) {
            return 0;
        }
        int avail = count - pos;
        if (avail <= 0) {
            fill();
            avail = count - pos;
            if (avail <= 0) {
                return 0;
            }
        }
        int skipped = (int) Math.min(avail, n);
        pos += skipped;
        return skipped;
    }

    @Override
    public int available() throws IOException {
        ensureOpen();
        int buffered = count - pos;
        int more = in.available();
        return buffered > Integer.MAX_VALUE - more ? Integer.MAX_VALUE : buffered + more;
    }

    @Override
    public void mark(int readlimit) {
        marklimit = readlimit;
        markpos = pos;
    }

    @Override
    public void reset() throws IOException {
        ensureOpen();
        if (markpos < 0) {
            throw new IOException("Resetting to invalid mark");
        }
        pos = markpos;
    }

    @Override
    public boolean markSupported() {
        return true;
    }

    @Override
    public void close() throws IOException {
        closed = true;
        in.close();
    }

    /** The buffer bytes this stream holds now (for tests). */
    int heldBytes() {
        return BufferedSockets.held(small, large, buf);
    }
}
