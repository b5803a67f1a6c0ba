package io.ehrelay.testing;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.spi.Clock;

/** A clock that moves only when a test says so. Thread-safe. */
public final class ManualClock implements Clock {

    private final AtomicLong nanos = new AtomicLong(TimeUnit.HOURS.toNanos(1));

    @Override
    public long nanoTime() {
        return nanos.get();
    }

    @Override
    public long currentTimeMillis() {
        return TimeUnit.NANOSECONDS.toMillis(nanos.get());
    }

    public ManualClock advance(long amount, TimeUnit unit) {
        nanos.addAndGet(unit.toNanos(amount));
        return this;
    }

    public ManualClock advanceMillis(long millis) {
        return advance(millis, TimeUnit.MILLISECONDS);
    }
}
