package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StreamSequencerTest {

    private final StreamSequencer sequencer = new StreamSequencer();

    @Test
    void firstBatchOfAStream_missesNothing_whateverItsNumber() {
        assertThat(sequencer.accept(7, 41)).isZero();
        assertThat(sequencer.last(7)).isEqualTo(41);
    }

    @Test
    void batchesInOrder_missNothing() {
        sequencer.accept(7, 1);
        assertThat(sequencer.accept(7, 2)).isZero();
        assertThat(sequencer.accept(7, 3)).isZero();
    }

    @Test
    void aJump_countsTheBatchesThatNeverArrived() {
        sequencer.accept(7, 1);
        assertThat(sequencer.accept(7, 5)).isEqualTo(3);
        assertThat(sequencer.last(7)).isEqualTo(5);
    }

    @Test
    void aBatchAgain_orAnOlderOne_isADuplicate_andDoesNotMoveTheStreamBack() {
        sequencer.accept(7, 4);
        assertThat(sequencer.accept(7, 4)).isEqualTo(StreamSequencer.DUPLICATE);
        assertThat(sequencer.accept(7, 2)).isEqualTo(StreamSequencer.DUPLICATE);
        assertThat(sequencer.last(7)).isEqualTo(4);
        assertThat(sequencer.accept(7, 5)).isZero();
    }

    @Test
    void streamsAreIndependent() {
        sequencer.accept(1, 10);
        assertThat(sequencer.accept(2, 1)).isZero();
        assertThat(sequencer.accept(1, 11)).isZero();
        assertThat(sequencer.accept(2, 3)).isEqualTo(1);
    }

    @Test
    void unsequencedBatches_areNeverDuplicates_norTracked() {
        assertThat(sequencer.accept(0, 0)).isZero();
        assertThat(sequencer.accept(0, 0)).isZero();
        assertThat(sequencer.streams()).isZero();
    }

    @Test
    void pastTheBound_oldStreamsAreForgotten_andRestartAsFirstBatches() {
        for (long s = 1; s <= StreamSequencer.MAX_STREAMS + 1; s++) {
            sequencer.accept(s, 5);
        }
        assertThat(sequencer.accept(StreamSequencer.MAX_STREAMS + 2, 1)).isZero();
        assertThat(sequencer.streams()).isEqualTo(1);
        assertThat(sequencer.accept(1, 5)).as("forgotten: a first batch again, not a duplicate").isZero();
    }
}
