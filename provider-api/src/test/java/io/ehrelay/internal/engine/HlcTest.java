package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.spi.Clock;
import org.junit.jupiter.api.Test;

class HlcTest {

    /** A wall clock the test sets. */
    private static final class SetClock implements Clock {
        final AtomicLong millis = new AtomicLong(1_000_000);

        @Override
        public long nanoTime() {
            return millis.get() * 1_000_000L;
        }

        @Override
        public long currentTimeMillis() {
            return millis.get();
        }
    }

    @Test
    void observe_saysWhetherAStampIsOfALaterMillisecondThanAnySeen() {
        SetClock clock = new SetClock();
        Hlc hlc = new Hlc(clock);
        long mine = hlc.next();
        assertThat(Hlc.millisOf(mine)).isEqualTo(1_000_000);
        assertThat(hlc.observe(mine - 1)).as("older").isFalse();
        assertThat(hlc.observe(mine + 1)).as("newer, the same millisecond").isFalse();
        long later = Hlc.stampAt(1_000_005);
        assertThat(hlc.observe(later)).as("a later millisecond").isTrue();
        assertThat(hlc.observe(later)).as("seen already").isFalse();
        assertThat(hlc.observe(later + 3)).isFalse();
        assertThat(hlc.next()).as("issued after what it saw, though the wall clock lags").isGreaterThan(later + 3);
        assertThat(hlc.aheadMillis(later)).isEqualTo(5);
    }
}
