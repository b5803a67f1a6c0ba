package io.ehrelay.replay;

import java.time.Instant;

/** Wall-clock microseconds: comparable between the replay's processes on one machine. */
public final class Clock {

    private Clock() {
    }

    public static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000L + now.getNano() / 1000;
    }
}
