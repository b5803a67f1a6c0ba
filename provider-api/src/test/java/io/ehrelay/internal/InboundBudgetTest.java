package io.ehrelay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.ehrelay.spi.Clock;
import org.junit.jupiter.api.Test;

class InboundBudgetTest {

    @Test
    void arrays_areReusedForBatchesOfAboutTheirSize_andOnlyOnceGivenBack() {
        InboundBudget budget = new InboundBudget(64L << 20, Clock.SYSTEM);
        byte[] a = budget.array(1_000_000);
        assertThat(a.length).as("a multiple of 4 KiB").isEqualTo(245 * 4096);
        assertThat(budget.array(1_000_000)).as("not given back yet: a new one").isNotSameAs(a);
        budget.recycle(a);
        assertThat(budget.pooled()).isEqualTo(a.length);
        assertThat(budget.array(880_000)).as("more than an eighth longer than the batch: not that one")
                .isNotSameAs(a);
        assertThat(budget.array(1_003_521)).as("longer than the array").isNotSameAs(a);
        assertThat(budget.array(900_000)).isSameAs(a);
        assertThat(budget.pooled()).isZero();
        assertThat(budget.array(1_040_000)).as("taken: a new one").isNotSameAs(a);
    }

    @Test
    void theArraysKept_holdAtMostTheBudget_oldestDroppedFirst() {
        InboundBudget budget = new InboundBudget(2L << 20, Clock.SYSTEM); // keeps at most 2 MiB
        byte[] first = budget.array(1 << 20);
        byte[] second = budget.array(1 << 20);
        byte[] third = budget.array(1 << 20);
        budget.recycle(first);
        budget.recycle(second);
        budget.recycle(third);
        assertThat(budget.pooled()).isEqualTo(2L << 20);
        assertThat(budget.array(1 << 20)).isSameAs(second);
        assertThat(budget.array(1 << 20)).isSameAs(third);
        assertThat(budget.array(1 << 20)).isNotSameAs(first);
        budget.recycle(new byte[3 << 20]); // larger than all it may keep
        assertThat(budget.pooled()).isZero();
    }

    @Test
    void arraysTheCollectorTookBack_areForgotten_andMadeAnew() {
        InboundBudget budget = new InboundBudget(8L << 20, Clock.SYSTEM);
        byte[] a = budget.array(1 << 20);
        byte[] b = budget.array(1 << 20);
        budget.recycle(a);
        budget.recycle(b);
        budget.clearSoftly(); // as the collector does when the heap runs short
        byte[] c = budget.array(1 << 20);
        assertThat(c).isNotSameAs(a).isNotSameAs(b).hasSize(a.length);
        assertThat(budget.pooled()).as("the arrays taken back no longer count").isZero();
        budget.recycle(c);
        assertThat(budget.borrowForParse(1 << 19).array()).isSameAs(c);
    }

    @Test
    void borrow_reusesArraysOfLargeBatchesOnly_andGivesEachBackOnce() {
        InboundBudget budget = new InboundBudget(64L << 20, Clock.SYSTEM);
        InboundBudget.Borrowed small = budget.borrow(1000);
        assertThat(small.array()).hasSize(1000);
        small.giveBack();
        assertThat(budget.pooled()).as("a small batch's array is its own").isZero();

        InboundBudget.Borrowed large = budget.borrow(500_000);
        byte[] array = large.array();
        assertThat(large.batch().remaining()).isEqualTo(500_000);
        large.giveBack();
        large.giveBack();
        assertThat(large.array()).as("nothing held after giving back").isNull();
        assertThat(budget.pooled()).as("given back once").isEqualTo(array.length);
        assertThat(budget.borrow(480_000).array()).isSameAs(array);
    }

    @Test
    void aLargeBound_keepsAtMost64MiB() {
        InboundBudget budget = new InboundBudget(256L << 20, Clock.SYSTEM);
        for (int i = 0; i < 80; i++) {
            budget.recycle(new byte[1 << 20]);
        }
        assertThat(budget.pooled()).isEqualTo(64L << 20);
    }

    @Test
    void borrowForParse_takesTheShortestArrayKeptThatHoldsTheFrame_howeverLonger() {
        InboundBudget budget = new InboundBudget(64L << 20, Clock.SYSTEM);
        byte[] four = budget.array(4 << 20);
        byte[] two = budget.array(2 << 20);
        budget.recycle(four);
        budget.recycle(two);

        InboundBudget.Borrowed frame = budget.borrowForParse(1 << 20);
        assertThat(frame.array()).as("the shortest that holds it, though twice as long").isSameAs(two);
        assertThat(frame.fits()).as("more than an eighth longer than the frame").isFalse();
        assertThat(budget.borrow(1 << 20).array()).as("a batch never gets a loose array").isNotSameAs(four);
        frame.giveBack();
        assertThat(budget.borrowForParse(3 << 20).array()).isSameAs(four);
        assertThat(budget.borrowForParse(1 << 20).array()).as("given back after its parse").isSameAs(two);

        InboundBudget.Borrowed fresh = budget.borrowForParse(1 << 20);
        assertThat(fresh.fits()).as("nothing kept: a new array of about its size").isTrue();
        InboundBudget.Borrowed small = budget.borrowForParse(60_000);
        assertThat(small.array()).hasSize(60_000);
        assertThat(small.fits()).isTrue();
        small.giveBack();
        assertThat(small.fits()).as("nothing held after giving back").isFalse();
    }
}
