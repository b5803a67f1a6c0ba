package io.ehrelay.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.ehrelay.spi.MalformedFrameException;
import io.ehrelay.internal.engine.RateLimitedLog;
import io.ehrelay.spi.TransportContext;

/**
 * A connection a peer opened to this node, served by one thread: it applies event batches in arrival order,
 * acknowledges those that ask for it, and answers state requests with chunks. A frame with a bad header
 * (magic, version, type, length) closes the connection; a damaged batch inside a sound frame is counted,
 * answered with NACK when acknowledged, and the connection stays. Nothing from a damaged frame is applied.
 */
final class InboundConnection implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(InboundConnection.class);
    private static final RateLimitedLog WARN = new RateLimitedLog(LOG, 10_000);
    private static final byte[] EMPTY = new byte[0];
    private static final int MAX_HELLO = 1024;

    private final FrameChannel channel;
    private final TransportContext context;
    private final Runnable onClose;
    private final java.util.function.Consumer<String> onHello;
    private String from;

    InboundConnection(SocketChannel sc, TransportContext context, Runnable onClose,
                      java.util.function.Consumer<String> onHello) throws IOException {
        this.onHello = onHello;
        sc.socket().setTcpNoDelay(true);
        this.channel = new FrameChannel(sc, context.maxFrameBytes());
        this.context = context;
        this.onClose = onClose;
        this.from = String.valueOf(sc.getRemoteAddress());
    }

    @Override
    public void run() {
        try {
            FrameChannel.Frame hello = channel.read();
            if (hello == null) {
                return;
            }
            if (hello.header.type() != Frames.Type.HELLO || hello.length() > MAX_HELLO) {
                throw new MalformedFrameException("connection did not start with a HELLO frame");
            }
            if (hello.length() > 0) {
                String endpoint = new String(hello.copy(), StandardCharsets.UTF_8);
                from = endpoint + " (" + from + ")";
                onHello.accept(endpoint);
            }
            while (true) {
                FrameChannel.Frame f = channel.read();
                if (f == null) {
                    return;
                }
                serve(f);
            }
        } catch (MalformedFrameException e) {
            context.metrics().markMalformedFrame();
            WARN.warn("frame:" + from, "ehrelay: closing connection from {}: {} (counted in rejected)", from,
                    e.getMessage());
        } catch (IOException e) {
            LOG.debug("connection from {} ended: {}", from, e.toString());
        } finally {
            close();
        }
    }

    private void serve(FrameChannel.Frame f) throws IOException, MalformedFrameException {
        long corr = f.header.correlationId();
        switch (f.header.type()) {
            case EVENTS:
                try {
                    context.inbound().onEvents(from, f.body());
                } catch (MalformedFrameException e) {
                    // counted and logged by the node; the framing is sound, so the connection stays
                } catch (RuntimeException e) {
                    WARN.warn("apply:" + from, "ehrelay: applying a batch from {} failed: {}", from, e.toString());
                }
                break;
            case EVENTS_ACK:
                try {
                    context.inbound().onEvents(from, f.body());
                    channel.write(Frames.Type.ACK, corr, EMPTY);
                } catch (MalformedFrameException | RuntimeException e) {
                    channel.write(Frames.Type.NACK, corr, reason(e));
                }
                break;
            case STATE_REQUEST:
                serveState(f, corr);
                break;
            default:
                throw new MalformedFrameException("unexpected " + f.header.type() + " frame on an inbound connection");
        }
    }

    private void serveState(FrameChannel.Frame f, long corr) throws IOException, MalformedFrameException {
        if (f.length() < 5 || f.length() > 4 + 65535) {
            throw new MalformedFrameException("state request of " + f.length() + " bytes");
        }
        byte[] request = f.copy();
        int requested = ByteBuffer.wrap(request).getInt();
        int maxFrame = context.maxFrameBytes();
        int chunk = Math.max(1024, Math.min(requested, maxFrame / 2));
        String cache = new String(request, 4, request.length - 4, StandardCharsets.UTF_8);
        try {
            context.inbound().onStateRequest(cache, chunk, bytes -> channel.write(Frames.Type.STATE_CHUNK, corr, bytes));
            channel.write(Frames.Type.STATE_END, corr, EMPTY);
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            channel.write(Frames.Type.NACK, corr, reason(e));
        }
    }

    private static byte[] reason(Exception e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        byte[] b = m.getBytes(StandardCharsets.UTF_8);
        return b.length <= 4096 ? b : java.util.Arrays.copyOf(b, 4096);
    }

    void close() {
        try {
            channel.channel().close();
        } catch (IOException e) {
            LOG.debug("closing connection from {}: {}", from, e.toString());
        }
        onClose.run();
    }
}
