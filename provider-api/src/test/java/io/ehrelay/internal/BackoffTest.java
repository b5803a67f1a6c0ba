package io.ehrelay.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeUnit;

import io.ehrelay.testing.ManualClock;
import org.junit.jupiter.api.Test;

class BackoffTest {

    private final ManualClock clock = new ManualClock();

    @Test
    void beforeAnyFailure_mayTryAtOnce() {
        Backoff b = Backoff.upTo(5000, clock);
        assertThat(b.mayTry()).isTrue();
        assertThat(b.remainingNanos()).isZero();
        assertThat(b.delayMillis()).isZero();
    }

    @Test
    void failures_waitInitialThenDoubleUpToTheMaximum() {
        Backoff b = Backoff.upTo(1000, clock);
        long[] expected = {100, 200, 400, 800, 1000, 1000};
        for (long delay : expected) {
            assertThat(b.failed()).isEqualTo(delay);
            assertThat(b.remainingMillis()).isEqualTo(delay);
            assertThat(b.mayTry()).isFalse();
            clock.advanceMillis(delay - 1);
            assertThat(b.mayTry()).isFalse();
            assertThat(b.remainingMillis()).isEqualTo(1);
            clock.advanceMillis(1);
            assertThat(b.mayTry()).isTrue();
        }
    }

    @Test
    void success_startsOverAtTheInitialDelay() {
        Backoff b = Backoff.upTo(5000, clock);
        b.failed();
        b.failed();
        b.failed();
        b.succeeded();
        assertThat(b.mayTry()).isTrue();
        assertThat(b.failed()).isEqualTo(100);
    }

    @Test
    void retryNow_endsTheWaitButKeepsTheDelayGrowing() {
        Backoff b = Backoff.upTo(5000, clock);
        b.failed();
        b.failed();
        assertThat(b.mayTry()).isFalse();
        b.retryNow();
        assertThat(b.mayTry()).isTrue();
        assertThat(b.failed()).isEqualTo(400);
    }

    @Test
    void remainingMillis_roundsUpAPartialMillisecond() {
        Backoff b = Backoff.upTo(5000, clock);
        b.failed();
        clock.advance(TimeUnit.MILLISECONDS.toNanos(99) + 1, TimeUnit.NANOSECONDS);
        assertThat(b.remainingNanos()).isEqualTo(TimeUnit.MILLISECONDS.toNanos(1) - 1);
        assertThat(b.remainingMillis()).isEqualTo(1);
    }

    @Test
    void maximumBelowTheInitialDelay_capsTheFirstWait() {
        Backoff b = Backoff.upTo(10, clock);
        assertThat(b.failed()).isEqualTo(10);
        assertThat(b.failed()).isEqualTo(10);
    }

    @Test
    void nonPositiveDelays_areRefused() {
        assertThatThrownBy(() -> new Backoff(clock, 0, 100)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Backoff(clock, 100, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
