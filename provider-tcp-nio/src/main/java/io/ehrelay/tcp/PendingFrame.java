package io.ehrelay.tcp;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/** A frame a {@link TcpPeerChannel} has queued to write. */
final class PendingFrame {

    final Frames.Type type;
    final long correlation;
    final ByteBuffer[] body;
    final int length;
    final CompletableFuture<Void> future;
    final boolean completeOnWrite;

    PendingFrame(Frames.Type type, long correlation, ByteBuffer[] body, int length, CompletableFuture<Void> future,
            boolean completeOnWrite) {
        this.type = type;
        this.correlation = correlation;
        this.body = body;
        this.length = length;
        this.future = future;
        this.completeOnWrite = completeOnWrite;
    }
}
