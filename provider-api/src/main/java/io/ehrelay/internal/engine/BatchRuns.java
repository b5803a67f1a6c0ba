package io.ehrelay.internal.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.internal.codec.ByteSink;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.Batch;

/**
 * What the dispatcher reads and makes of a batch's events: the caches they belong to, a copy of the batch
 * without some of them (for a peer that lacks a cache), and the per-cache counting of a batch one peer took or
 * did not, once per run of events of one cache. Stateless.
 */
final class BatchRuns {

    private BatchRuns() {
    }

    static List<String> cacheNames(List<ReplicationQueue.Entry> events) {
        List<String> names = new ArrayList<>(events.size());
        for (ReplicationQueue.Entry e : events) {
            names.add(e.cache.cacheName());
        }
        return names;
    }

    /**
     * The batch without the events {@code out} marks, under the same header (stream and number: the peer sees no
     * gap). A copy, made only for a peer that lacks a cache of the batch.
     */
    static Batch without(ByteSink buffer, int[] starts, boolean[] out, int flags, long stream, long seq) {
        ByteBuffer all = buffer.view();
        int kept = 0;
        int size = EventCodec.BATCH_HEADER_BYTES;
        for (int i = 0; i < out.length; i++) {
            if (!out[i]) {
                kept++;
                size += starts[i + 1] - starts[i];
            }
        }
        ByteSink copy = new ByteSink(size);
        copy.write(EventCodec.batchHeader(0), 0, EventCodec.BATCH_HEADER_BYTES);
        for (int i = 0; i < out.length; i++) {
            if (!out[i]) {
                ByteBuffer ev = all.duplicate();
                ev.limit(starts[i + 1]).position(starts[i]);
                copy.write(ev);
            }
        }
        EventCodec.putBatchHeader(copy, 0, kept, flags, stream, seq);
        return new Batch(copy.toByteArray(), kept);
    }

    /**
     * Counts the events of a batch one peer took ({@code sent}, with the latency at {@code now} of each run's
     * oldest event) or did not (failed), once per run of events of one cache; {@code out} marks events left out
     * for this peer.
     */
    static void countRuns(List<ReplicationQueue.Entry> events, boolean[] out, boolean sent, long now) {
        CacheMetrics run = null;
        int n = 0;
        long bytes = 0;
        long oldest = Long.MIN_VALUE;
        for (int i = 0; i < events.size(); i++) {
            if (out != null && out[i]) {
                continue;
            }
            ReplicationQueue.Entry e = events.get(i);
            if (e.cache != run) {
                countRun(run, n, bytes, oldest, sent);
                run = e.cache;
                n = 0;
                bytes = 0;
                oldest = Long.MIN_VALUE; // a clock gone backwards gives a negative one, which is not sampled
            }
            n++;
            bytes += e.size;
            oldest = Math.max(oldest, now - e.enqueuedNanos);
        }
        countRun(run, n, bytes, oldest, sent);
    }

    static void countRun(CacheMetrics run, int n, long bytes, long oldest, boolean sent) {
        if (run == null || n == 0) {
            return;
        }
        if (sent) {
            run.onSent(n, bytes, oldest);
        } else {
            run.onFailed(n);
        }
    }
}
