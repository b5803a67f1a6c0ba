package io.ehrelay.internal.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The receiving side's view of each sender's numbered batches. Every dispatcher lane of a sender is one stream (a
 * random id per run) whose batches are numbered 1, 2, 3…; the sequencer remembers the last number applied per
 * stream and tells the receive path whether a batch is new, how many batches before it never arrived, or whether
 * it is a duplicate (a retry after a connection reset whose first attempt had arrived), which must not be applied
 * again since it could undo later events. Thread-safe; bounded (streams of peers' past runs are forgotten in one
 * sweep past {@link #MAX_STREAMS}, after which a stream restarts as if its next batch were its first).
 */
final class StreamSequencer {

    /** The answer for a batch that was already applied. */
    static final long DUPLICATE = -1;
    static final int MAX_STREAMS = 100_000;

    private final Map<Long, Long> lastSeq = new ConcurrentHashMap<>();

    /**
     * Records that batch {@code seq} of {@code stream} is being applied.
     *
     * @return {@link #DUPLICATE}, or the number of batches of the stream missed just before this one (0 for the
     *         first batch seen of a stream, the next one in order, or an unsequenced batch, {@code stream == 0})
     */
    long accept(long stream, long seq) {
        if (stream == 0) {
            return 0;
        }
        if (lastSeq.size() > MAX_STREAMS) {
            lastSeq.clear();
        }
        long[] verdict = new long[1];
        lastSeq.compute(stream, (s, previous) -> {
            if (previous != null && seq <= previous) {
                verdict[0] = DUPLICATE;
                return previous;
            }
            verdict[0] = previous == null ? 0 : seq - previous - 1;
            return seq;
        });
        return verdict[0];
    }

    /** The last batch number applied from {@code stream}, or {@code null}. */
    Long last(long stream) {
        return lastSeq.get(stream);
    }

    int streams() {
        return lastSeq.size();
    }
}
