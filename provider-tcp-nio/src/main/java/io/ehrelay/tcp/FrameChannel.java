package io.ehrelay.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;

import io.ehrelay.codec.Frames;
import io.ehrelay.codec.MalformedFrameException;

/**
 * Reads and writes {@link Frames} on a blocking socket channel. Frames are read into one receive buffer per
 * channel, reused from frame to frame; it grows with the bytes that actually arrive (from 64 KiB, doubling),
 * so a header announcing a large body costs nothing until the peer really sends it, and never more than
 * {@code maxFrameBytes}. A frame's body is valid until the next {@link #read()}. Not thread-safe: one reader
 * and one writer thread per channel.
 */
final class FrameChannel {

    private static final int INITIAL_BODY = 64 * 1024;

    private final SocketChannel channel;
    private final int maxFrameBytes;
    private final ByteBuffer header = ByteBuffer.allocate(Frames.HEADER_BYTES);

    private byte[] buffer = new byte[INITIAL_BODY];

    /** A received frame: its body is {@code body[0, length)}, valid until the next read. */
    static final class Frame {
        final Frames.Header header;
        final byte[] body;
        final int length;

        Frame(Frames.Header header, byte[] body, int length) {
            this.header = header;
            this.body = body;
            this.length = length;
        }

        byte[] copy() {
            return Arrays.copyOf(body, length);
        }
    }

    FrameChannel(SocketChannel channel, int maxFrameBytes) {
        this.channel = channel;
        this.maxFrameBytes = maxFrameBytes;
    }

    SocketChannel channel() {
        return channel;
    }

    /** Reads one frame; {@code null} at a clean end of stream between frames. */
    Frame read() throws IOException, MalformedFrameException {
        header.clear();
        if (!fill(header, true)) {
            return null;
        }
        header.flip();
        Frames.Header h = Frames.readHeader(header, maxFrameBytes);
        int length = h.bodyLength();
        byte[] body = buffer;
        int read = 0;
        while (read < length) {
            if (read == body.length) {
                body = Arrays.copyOf(body, (int) Math.min(length, 2L * body.length));
                buffer = body;
            }
            int n = channel.read(ByteBuffer.wrap(body, read, Math.min(body.length, length) - read));
            if (n < 0) {
                throw new EOFException("connection closed inside a frame body (" + read + " of " + length + " bytes)");
            }
            read += n;
        }
        return new Frame(h, body, length);
    }

    private boolean fill(ByteBuffer b, boolean eofAllowedAtStart) throws IOException {
        while (b.hasRemaining()) {
            int n = channel.read(b);
            if (n < 0) {
                if (eofAllowedAtStart && b.position() == 0) {
                    return false;
                }
                throw new EOFException("connection closed inside a frame header");
            }
        }
        return true;
    }

    /** Writes a frame with a contiguous body. */
    void write(Frames.Type type, long correlation, byte[] body) throws IOException {
        writeAll(new ByteBuffer[] {Frames.header(type, correlation, body.length), ByteBuffer.wrap(body)});
    }

    void writeAll(ByteBuffer[] buffers) throws IOException {
        long left = 0;
        for (ByteBuffer b : buffers) {
            left += b.remaining();
        }
        int first = 0;
        while (left > 0) {
            long n = channel.write(buffers, first, buffers.length - first);
            left -= n;
            while (first < buffers.length && !buffers[first].hasRemaining()) {
                first++;
            }
        }
    }
}
