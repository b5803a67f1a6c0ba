package io.ehrelay.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.atomic.AtomicLong;

import io.ehrelay.spi.TransportMetrics;
import io.ehrelay.testing.LogCapture;
import io.ehrelay.testing.ManualClock;
import org.junit.jupiter.api.Test;

/** The inbound-connection policy every transport shares, on a clock the test moves. */
class InboundSlotsTest {

    private final ManualClock clock = new ManualClock();
    private final Counter refused = new Counter();
    private final InboundSlots<Conn> slots = new InboundSlots<>("TCP", 3, 60_000, refused, "cm", clock);

    @Test
    void admitsUpToTheBoundThenRefusesAndCounts() {
        Conn a = admitted();
        Conn b = admitted();
        Conn c = admitted();
        clock.advanceMillis(59_999);
        Conn d = new Conn();
        try (LogCapture log = LogCapture.start()) {
            assertThat(slots.admit(d)).as("no slot: all three spoke within the idle time").isFalse();
            assertThat(log.lines("refusing an inbound TCP connection from peer-" + d.id)).singleElement().asString()
                    .contains("maxInboundConnections=3 are open, none still in its handshake or silent for 60 s");
        }
        assertThat(refused.value()).isEqualTo(1);
        assertThat(slots.size()).isEqualTo(3);
        assertThat(a.evicted || b.evicted || c.evicted || d.evicted).isFalse();
    }

    @Test
    void theOldestStillInItsHandshakeGivesItsSlotFirst() {
        Conn a = admitted();
        Conn b = admitted();
        Conn c = admitted();
        a.established();
        b.handshaking = true;
        c.handshaking = true;
        Conn d = new Conn();
        try (LogCapture log = LogCapture.start()) {
            clock.advanceMillis(250);
            assertThat(slots.admit(d)).isTrue();
            assertThat(log.lines("closed the TCP connection from peer-" + b.id + ", still in its handshake after 250 ms"))
                    .hasSize(1);
        }
        assertThat(b.evicted).as("the oldest in its handshake").isTrue();
        assertThat(a.evicted || c.evicted).isFalse();
        assertThat(refused.value()).isEqualTo(1);
        assertThat(slots.size()).isEqualTo(3);
    }

    @Test
    void elseTheOneSilentLongestOnceSilentForTheIdleTime() {
        Conn a = admitted();
        Conn b = admitted();
        Conn c = admitted();
        clock.advanceMillis(10_000);
        a.heard();
        c.heard();
        clock.advanceMillis(49_999);
        assertThat(slots.admit(new Conn())).as("b silent 59.999 s").isFalse();
        clock.advanceMillis(1);
        Conn d = new Conn();
        assertThat(slots.admit(d)).as("b silent 60 s").isTrue();
        assertThat(b.evicted).isTrue();
        assertThat(a.evicted || c.evicted).isFalse();
        assertThat(refused.value()).as("one refused, one evicted").isEqualTo(2);
    }

    @Test
    void aClosedConnectionFreesItsSlot() {
        Conn a = admitted();
        admitted();
        admitted();
        slots.closed(a);
        assertThat(slots.admit(new Conn())).isTrue();
        assertThat(refused.value()).isZero();
    }

    @Test
    void closesOnlyConnectionsStalledInAFrame() {
        Conn idle = admitted();
        Conn midFrame = admitted();
        Conn fresh = admitted();
        midFrame.inFrame = true;
        clock.advanceMillis(30_001);
        fresh.inFrame = true;
        fresh.heard();
        assertThat(slots.closeStalled(30_000)).isEqualTo(1);
        assertThat(midFrame.evicted).isTrue();
        assertThat(idle.evicted || fresh.evicted).as("silent between frames, or still sending").isFalse();
    }

    @Test
    void afterCloseAllNothingIsAdmitted() {
        Conn a = admitted();
        slots.closeAll();
        assertThat(a.evicted).isTrue();
        assertThat(slots.size()).isZero();
        assertThat(slots.admit(new Conn())).isFalse();
    }

    @Test
    void aBoundBelowOneIsAnError() {
        assertThatThrownBy(() -> new InboundSlots<Conn>("TCP", 0, 1000, refused, "cm", clock))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least 1, was 0");
    }

    private Conn admitted() {
        Conn c = new Conn();
        assertThat(slots.admit(c)).isTrue();
        return c;
    }

    private static final class Counter implements TransportMetrics.Count {
        private final AtomicLong n = new AtomicLong();

        @Override
        public void mark() {
            n.incrementAndGet();
        }

        @Override
        public long value() {
            return n.get();
        }
    }

    private final class Conn implements InboundSlots.Connection {
        private final int id = System.identityHashCode(this);
        private final long accepted = clock.nanoTime();
        private long last = accepted;
        private boolean handshaking;
        private boolean inFrame;
        private boolean evicted;

        void heard() {
            last = clock.nanoTime();
        }

        void established() {
            handshaking = false;
        }

        @Override
        public long acceptedNanos() {
            return accepted;
        }

        @Override
        public long lastActiveNanos() {
            return last;
        }

        @Override
        public boolean inHandshake() {
            return handshaking;
        }

        @Override
        public boolean inFrame() {
            return inFrame;
        }

        @Override
        public String remote() {
            return "peer-" + id;
        }

        @Override
        public void evict() {
            closeQuietly();
        }

        @Override
        public void closeQuietly() {
            evicted = true;
            slots.closed(this);
        }
    }
}
