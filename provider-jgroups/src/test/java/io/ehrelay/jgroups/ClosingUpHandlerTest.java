package io.ehrelay.jgroups;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.Event;
import org.jgroups.Message;
import org.jgroups.UpHandler;
import org.jgroups.View;
import org.jgroups.util.MessageBatch;
import org.jgroups.util.UUID;
import org.junit.jupiter.api.Test;

/** What reaches the dispatcher while a stopping node closes its channel. */
class ClosingUpHandlerTest {

    /** Records what it is handed, as the MessageDispatcher's adapter would handle it. */
    private static final class Recording implements UpHandler {
        final List<Object> seen = new ArrayList<>();
        Address local;

        @Override
        public UpHandler setLocalAddress(Address a) {
            local = a;
            return this;
        }

        @Override
        public Object up(Event evt) {
            seen.add(evt);
            return "handled";
        }

        @Override
        public Object up(Message msg) {
            seen.add(msg);
            return "answered";
        }

        @Override
        public void up(MessageBatch batch) {
            seen.add(batch);
        }
    }

    @Test
    void eventsStillReachTheDispatcher_butRequestsNoLonger() {
        Recording running = new Recording();
        ClosingUpHandler closing = new ClosingUpHandler(running);
        Address self = UUID.randomUUID();
        Address peer = UUID.randomUUID();

        Event view = new Event(Event.VIEW_CHANGE, View.create(self, 2, self));
        assertThat(closing.up(view)).isEqualTo("handled");
        assertThat(closing.setLocalAddress(self)).isSameAs(closing);
        assertThat(running.local).isEqualTo(self);

        Message request = new BytesMessage(self, new byte[] {1}).setSrc(peer);
        assertThat(closing.up(request)).as("nothing answers a request").isNull();
        MessageBatch batch = new MessageBatch(self, peer, null, false, new ArrayList<>(List.of(request)));
        closing.up(batch);

        assertThat(running.seen).as("only the view reached the dispatcher").containsExactly(view);
    }
}
