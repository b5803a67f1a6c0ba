package io.ehrelay.rmi;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.InvalidObjectException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.ref.WeakReference;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.rmi.RemoteException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import io.ehrelay.internal.InboundBudget;
import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.spi.Batch;
import io.ehrelay.spi.Clock;

/**
 * An event batch as it travels to a peer's relay ({@link RelayRemote#deliver}, {@link RelayRemote#post}): the
 * sender's name, its session and the batch's bytes, written by hand so that the receiving node decides before it
 * holds any of the batch whether the caller may send at all ({@link RpcSessions#check}) and whether the batch
 * fits ({@code maxFrameBytes}; over 64 KiB, a share of {@code inboundBufferMaxBytes} from {@link InboundBudget},
 * waiting up to 10 s). A refused batch fails the call. Which node a batch is read for is told by that node's
 * export filter ({@link Receiver#admitted}). See docs/rmi.md, "Connections and memory".
 */
final class RelayBatch implements Serializable {

    private static final long serialVersionUID = 3L;
    /** Batches up to this size are read without taking a share of the budget (the connections' bound covers them). */
    static final int SMALL = 64 * 1024;
    /** How long a batch waits for room in the node's budget before the call is refused. */
    static final long BUDGET_WAIT_MILLIS = 10_000;
    private static final int MAX_NAME_BYTES = 1024;

    /**
     * The node a batch is being read for, from its filter to this class's {@code readObject} (weakly: a stream
     * that names the class and never reads an instance must not keep a stopped node reachable).
     */
    private static final ThreadLocal<WeakReference<Receiver>> READING = new ThreadLocal<>();
    /** A share not claimed by the relay this long after its batch was read is given back ({@link Receiver}). */
    static final long UNCLAIMED_MILLIS = 5_000;

    private transient String from;
    private transient byte[] session;
    private transient byte[] bytes;
    /**
     * On the sending side, instead of {@link #bytes}: the batch in the dispatcher's buffer, written from there
     * ({@link Batch#writeTo}: its heap array in one write, or direct memory through {@link #scratch}; no array of
     * the batch's size per send; the buffer is read only while the call writes its argument, before the send
     * completes).
     */
    private transient Batch data;
    private transient byte[] scratch;
    /** On the receiving side: the batch, in an array of the node's budget. */
    private transient InboundBudget.Borrowed received;
    /** On the receiving side: the sender as its session names it, and the share held of that node's budget. */
    private transient String sender;
    private transient Receiver heldFor;
    private transient long held;
    /** The length written ahead of the bytes: theirs, except in {@link #stalling}. */
    private transient int announced;
    private transient long stallMillis;

    RelayBatch(String from, byte[] session, byte[] bytes) {
        this(from, session, bytes, bytes.length, 0);
    }

    /**
     * A batch written from {@code data} (read and not modified) as {@link Batch#writeTo} writes it, through
     * {@code scratch} when it is in direct memory; the caller owns {@code scratch} and does not share it while the
     * call runs.
     */
    RelayBatch(String from, byte[] session, Batch data, byte[] scratch) {
        this.from = from;
        this.session = session;
        this.data = data;
        this.scratch = scratch;
        this.announced = data.length();
    }

    private RelayBatch(String from, byte[] session, byte[] bytes, int announced, long stallMillis) {
        this.from = from;
        this.session = session;
        this.bytes = bytes;
        this.announced = announced;
        this.stallMillis = stallMillis;
    }

    /**
     * A batch that announces {@code announced} bytes, sends only {@code bytes}, then stops for up to
     * {@code stallMillis} (or until the receiver closes the connection) and fails its call: what a peer that
     * stops in the middle of a batch does. For the tests and the attacker suite.
     */
    static RelayBatch stalling(String from, byte[] session, byte[] bytes, int announced, long stallMillis) {
        return new RelayBatch(from, session, bytes, announced, stallMillis);
    }

    /** A received batch's bytes, in an array of the node's budget ({@link InboundBudget#borrow}). */
    ByteBuffer data() {
        return received.batch();
    }

    /** Gives a received batch's array back (for a later batch), once nothing reads it any more. */
    void recycle() {
        received.giveBack();
    }

    /** The sender, as authenticated when this batch was read (its session's name), or as it claims without a secret. */
    String sender() {
        return sender;
    }

    /** Whether this batch was read by a node's relay (and checked there). */
    boolean received() {
        return sender != null;
    }

    /**
     * The relay took this batch as its argument: from now on it gives the share back ({@link #release}). A
     * batch read but never claimed — e.g. sent in the place of another argument, so that the call fails before
     * the relay runs — is given back by its node after {@link #UNCLAIMED_MILLIS}.
     */
    synchronized void claim() {
        if (heldFor != null) {
            heldFor.unclaimed.remove(this);
        }
    }

    /** Gives this batch's share of the node's budget back; once. */
    synchronized void release() {
        if (heldFor != null) {
            heldFor.unclaimed.remove(this);
            heldFor.budget.release(held);
            heldFor = null;
            held = 0;
        }
    }

    /** UTF-8 bytes of a name (sender, cache) as the relay's calls carry it. */
    static byte[] name(String name) {
        return (name == null ? "" : name).getBytes(StandardCharsets.UTF_8);
    }

    /** A name the relay received; refused when longer than a name can be. */
    static String name(byte[] utf8) throws RemoteException {
        if (utf8 == null) {
            return null;
        }
        if (utf8.length > MAX_NAME_BYTES) {
            throw new RemoteException("ehrelay: a name of " + utf8.length + " bytes");
        }
        return new String(utf8, StandardCharsets.UTF_8);
    }

    private void writeObject(ObjectOutputStream out) throws IOException {
        writeName(out, from);
        out.writeByte(session == null ? 0 : session.length);
        if (session != null) {
            out.write(session);
        }
        out.writeInt(announced);
        if (data != null) {
            data.writeTo(out, scratch);
            return;
        }
        out.write(bytes);
        if (announced > bytes.length) {
            out.flush(); // the receiver sees what there is, and waits for the rest
            try {
                Thread.sleep(stallMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            throw new IOException("a stalled batch: " + bytes.length + " of " + announced + " bytes sent");
        }
    }

    private void readObject(ObjectInputStream in) throws IOException {
        WeakReference<Receiver> ref = READING.get();
        READING.remove();
        Receiver node = ref == null ? null : ref.get();
        if (node == null) {
            throw new InvalidObjectException("ehrelay: a relay batch read outside a relay call");
        }
        from = readName(in);
        int sessionLength = in.readUnsignedByte();
        if (sessionLength > 0) {
            session = new byte[sessionLength];
            in.readFully(session);
        }
        sender = node.sender(from, session);
        int length = in.readInt();
        if (length < 0 || length > node.maxFrameBytes) {
            node.rejected("a batch of " + length + " bytes from " + sender + " (maxFrameBytes=" + node.maxFrameBytes
                    + ")");
            throw new InvalidObjectException("ehrelay: refused a batch of " + length + " bytes (maxFrameBytes="
                    + node.maxFrameBytes + ")");
        }
        if (length > SMALL) {
            take(node, length);
        }
        InboundBudget.Borrowed batch = node.budget.borrow(length);
        try {
            in.readFully(batch.array(), 0, length);
        } catch (IOException | RuntimeException | Error e) {
            release();
            batch.giveBack();
            throw e;
        }
        received = batch;
        if (heldFor != null) {
            node.readUnclaimed(this);
        }
    }

    private void take(Receiver node, int length) throws IOException {
        boolean room = false;
        try {
            long until = node.clock.nanoTime() + BUDGET_WAIT_MILLIS * 1_000_000L;
            do {
                node.giveBackUnclaimed();
                room = node.budget.reserve(length, Math.min(1000,
                        Math.max(1, (until - node.clock.nanoTime()) / 1_000_000L)));
            } while (!room && node.clock.nanoTime() - until < 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("ehrelay: interrupted while waiting for room for a batch");
        }
        if (!room) {
            node.rejected("a batch of " + length + " bytes from " + sender + ": the batches being read hold "
                    + "inboundBufferMaxBytes=" + node.budget.max() + " bytes");
            throw new InvalidObjectException("ehrelay: no room for a batch of " + length + " bytes within "
                    + BUDGET_WAIT_MILLIS + " ms (inboundBufferMaxBytes=" + node.budget.max() + ")");
        }
        synchronized (this) {
            held = length;
            heldFor = node;
        }
    }

    private static void writeName(ObjectOutputStream out, String name) throws IOException {
        byte[] b = name(name);
        out.writeShort(b.length);
        out.write(b);
    }

    private static String readName(ObjectInputStream in) throws IOException {
        int n = in.readUnsignedShort();
        if (n > MAX_NAME_BYTES) {
            throw new InvalidObjectException("ehrelay: a sender name of " + n + " bytes");
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    /**
     * One node's relay as the batches read for it see it: its sessions (or none), its budget and its limits.
     * Thread-safe.
     */
    static final class Receiver {
        private final RpcSessions sessions;
        private final Clock clock;
        private final InboundBudget budget;
        private final int maxFrameBytes;
        private final Consumer<String> onRejected;
        /** Batches read for this node, holding a share, that the relay has not claimed yet: when each was read. */
        private final Map<RelayBatch, Long> unclaimed = new ConcurrentHashMap<>();

        /**
         * @param sessions   the node's sessions, or {@code null} without a cluster secret (the listening socket's
         *                   host gate has then admitted the caller)
         * @param onRejected counts and logs a batch refused for its size or for lack of room
         * @param clock      the node's clock: how long a batch waits for room, when an unclaimed one is given back
         */
        Receiver(RpcSessions sessions, InboundBudget budget, int maxFrameBytes,
                 Consumer<String> onRejected, Clock clock) {
            this.clock = clock;
            this.sessions = sessions;
            this.budget = budget;
            this.maxFrameBytes = maxFrameBytes;
            this.onRejected = onRejected;
        }

        /** Called by the node's export filter when it lets a class through: a batch is about to be read for it. */
        void admitted(Class<?> type) {
            if (type == RelayBatch.class) {
                READING.set(new WeakReference<>(this));
            } else {
                READING.remove();
            }
        }

        private void readUnclaimed(RelayBatch batch) {
            unclaimed.put(batch, clock.nanoTime());
        }

        /** Gives back the shares of batches read more than {@link #UNCLAIMED_MILLIS} ago that no call claimed. */
        void giveBackUnclaimed() {
            long cutoff = clock.nanoTime() - UNCLAIMED_MILLIS * 1_000_000L;
            for (Map.Entry<RelayBatch, Long> e : unclaimed.entrySet()) {
                if (e.getValue() - cutoff < 0) {
                    e.getKey().release();
                }
            }
        }

        private String sender(String claimed, byte[] session) throws IOException {
            return RelayEndpoint.sender(sessions, claimed, session);
        }

        private void rejected(String why) {
            onRejected.accept(why);
        }
    }
}
