package io.ehrelay.rmi;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InvalidObjectException;
import java.net.InetAddress;

import io.ehrelay.internal.codec.CodecLimits;
import io.ehrelay.internal.codec.SerialStreamWalker;
import io.ehrelay.spi.MalformedFrameException;

/**
 * What RMI reads from an inbound connection, checked before RMI's reader gets it: the JRMP messages are followed
 * and each call's arguments walked ahead of the JDK's reader with the node's limits ({@link SerialStreamWalker}),
 * so stock {@code CachePeer} calls hold the bounds of ehrelay's frames; bytes pass on as soon as walked. A refused
 * or malformed connection fails every later read. See docs/rmi.md. Not thread-safe (one reader, as RMI reads).
 */
final class CheckedCalls extends InputStream {

    /** Told when a connection's bytes are refused. */
    interface Refusals {
        void refused(String why);
    }

    /** Opens the checked stream of a connection: what RMI reads from {@code in}, sent by {@code from}. */
    interface Factory {
        CheckedCalls open(InputStream in, InetAddress from);
    }

    private static final int MAGIC = 0x4a524d49;
    private static final int STREAM_PROTOCOL = 0x4b;
    private static final int SINGLE_OP_PROTOCOL = 0x4c;
    private static final int CALL = 0x50;
    private static final int PING = 0x52;
    private static final int DGC_ACK = 0x54;
    private static final int STREAM_HEADER = 0xaced0005;

    private enum State { HANDSHAKE, CLIENT_ENDPOINT, MESSAGE, CALL, DEAD }

    private final InputStream in;
    private final CodecLimits limits;
    private final Refusals refusals;
    private final String from;
    private byte[] buf = new byte[8192];
    /** The reader's position; bytes before {@code released} are walked and may be read. */
    private int pos;
    private int released;
    /** The walker's position (at or after {@code released}) and the end of what was read from below. */
    private int walked;
    private int count;
    private int markpos = -1;
    private int marklimit;
    private State state = State.HANDSHAKE;
    private SerialStreamWalker call;
    private IOException dead;

    private final SerialStreamWalker.Input input = new SerialStreamWalker.Input() {
        @Override
        public int peek() throws IOException {
            return available(1) ? buf[walked] & 0xff : -1;
        }

        @Override
        public long read(int n) throws IOException {
            if (!available(n)) {
                throw new EOFException("connection ended within a call");
            }
            long v = 0;
            for (int i = 0; i < n; i++) {
                v = v << 8 | (buf[walked++] & 0xff);
            }
            return v;
        }

        @Override
        public long skipSome(long n) throws IOException {
            if (!available(1)) {
                throw new EOFException("connection ended within a call");
            }
            int k = (int) Math.min(n, count - walked);
            walked += k;
            return k;
        }
    };

    CheckedCalls(InputStream in, CodecLimits limits, Refusals refusals, String from) {
        this.in = in;
        this.limits = limits;
        this.refusals = refusals;
        this.from = from;
    }

    /** Waits until {@code n} bytes past the walker's position are read from below; false at the end. */
    private boolean available(int n) throws IOException {
        while (count - walked < n) {
            if (count == buf.length) {
                compact(n);
            }
            int r = in.read(buf, count, buf.length - count);
            if (r < 0) {
                return false;
            }
            count += r;
        }
        return true;
    }

    /** Makes room: drops what the reader consumed (keeping a valid mark), or grows the buffer. */
    private void compact(int n) {
        int keepFrom = markpos >= 0 && released - markpos <= marklimit ? markpos : pos;
        if (markpos >= 0 && keepFrom != markpos) {
            markpos = -1;
        }
        int keep = count - keepFrom;
        byte[] target = keep + n > buf.length ? new byte[Math.max(buf.length * 2, keep + n)] : buf;
        System.arraycopy(buf, keepFrom, target, 0, keep);
        buf = target;
        pos -= keepFrom;
        released -= keepFrom;
        walked -= keepFrom;
        count -= keepFrom;
        if (markpos >= 0) {
            markpos -= keepFrom;
        }
    }

    /**
     * Walks on until at least one more byte is released. {@code eager}: only as far as the bytes already read
     * allow, never waiting (a call's last byte may be the last the peer sends before it waits for the answer).
     *
     * @return false at the end of the connection
     */
    private boolean advance(boolean eager) throws IOException {
        int before = released;
        while (released == before) {
            if (eager && count == walked) {
                return true;
            }
            try {
                if (!walkOne(eager)) {
                    return released > before;
                }
            } catch (MalformedFrameException e) {
                die(e.getMessage());
            }
            released = walked;
        }
        return true;
    }

    /** One step of the protocol; false at the end of the connection, or when eager and a new message would start. */
    private boolean walkOne(boolean eager) throws IOException, MalformedFrameException {
        switch (state) {
            case HANDSHAKE: {
                if (!available(7)) {
                    return false;
                }
                int magic = (int) input.read(4);
                int version = (int) input.read(2);
                int protocol = (int) input.read(1);
                if (magic != MAGIC || version != 2) {
                    die("not a JRMP connection");
                }
                if (protocol == STREAM_PROTOCOL) {
                    state = State.CLIENT_ENDPOINT;
                } else if (protocol == SINGLE_OP_PROTOCOL) {
                    state = State.MESSAGE;
                } else {
                    die(String.format("JRMP protocol 0x%02x (only the stream and single-operation ones are served)",
                            protocol));
                }
                return true;
            }
            case CLIENT_ENDPOINT: {
                if (!available(2)) {
                    return false;
                }
                int n = (int) input.read(2);
                if (!available(n + 4)) {
                    return false;
                }
                walked += n + 4;
                state = State.MESSAGE;
                return true;
            }
            case MESSAGE: {
                if (eager || !available(1)) {
                    return false;
                }
                int op = (int) input.read(1);
                if (op == CALL) {
                    if (!available(4)) {
                        return false;
                    }
                    if ((int) input.read(4) != STREAM_HEADER) {
                        die("a call that is not a serialization stream");
                    }
                    call = new SerialStreamWalker(input, limits, "an RMI call from " + from);
                    state = State.CALL;
                } else if (op == DGC_ACK) {
                    if (!available(14)) {
                        return false;
                    }
                    walked += 14;
                } else if (op != PING) {
                    die(String.format("JRMP message 0x%02x", op));
                }
                return true;
            }
            case CALL: {
                if (call.atTopLevel() && !available(1)) {
                    return false;
                }
                if (!call.step()) {
                    call = null;
                    state = State.MESSAGE;
                    return !eager && walkOne(false);
                }
                return true;
            }
            default:
                throw dead;
        }
    }

    private void die(String why) throws IOException {
        state = State.DEAD;
        dead = new InvalidObjectException("ehrelay: " + why);
        refusals.refused(why);
        throw dead;
    }

    @Override
    public int read() throws IOException {
        if (pos >= released && !advance(false)) {
            return -1;
        }
        return buf[pos++] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        if ((off | len | (off + len) | (b.length - (off + len))) < 0) {
            throw new IndexOutOfBoundsException();
        }
        if (len == 0) {
            return 0;
        }
        if (pos >= released && !advance(false)) {
            return -1;
        }
        // what is already read from below may be walked on without waiting: larger reads, fewer calls
        while (released - pos < len && count > walked && state == State.CALL) {
            if (!advance(true)) {
                break;
            }
        }
        int n = Math.min(len, released - pos);
        System.arraycopy(buf, pos, b, off, n);
        pos += n;
        return n;
    }

    @Override
    public long skip(long n) throws IOException {
        if (n <= 0) {
            return 0;
        }
        if (pos >= released && !advance(false)) {
            return 0;
        }
        int k = (int) Math.min(n, released - pos);
        pos += k;
        return k;
    }

    @Override
    public int available() {
        return released - pos;
    }

    @Override
    public boolean markSupported() {
        return true;
    }

    @Override
    public void mark(int readlimit) {
        markpos = pos;
        marklimit = readlimit;
    }

    @Override
    public void reset() throws IOException {
        if (markpos < 0) {
            throw new IOException("Resetting to invalid mark");
        }
        pos = markpos;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
