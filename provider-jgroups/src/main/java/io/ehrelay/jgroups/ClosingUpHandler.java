package io.ehrelay.jgroups;

import org.jgroups.Address;
import org.jgroups.Event;
import org.jgroups.Message;
import org.jgroups.UpHandler;
import org.jgroups.util.MessageBatch;

/**
 * The channel's up handler while a stopping node closes its channel: events (views, the leave) still reach the
 * handler it replaces; messages no longer do. A member's request arriving then could not be answered any more
 * (JGroups logs each as an ERROR, "failed passing message to up-handler: channel is not connected"), and there is
 * nothing left to apply it to: this node has told its peers it leaves and closed its relay. The member that asked
 * stops waiting when this node leaves its view.
 */
final class ClosingUpHandler implements UpHandler {

    private final UpHandler running;

    ClosingUpHandler(UpHandler running) {
        this.running = running;
    }

    @Override
    public UpHandler setLocalAddress(Address a) {
        running.setLocalAddress(a);
        return this;
    }

    @Override
    public Object up(Event evt) {
        return running.up(evt);
    }

    @Override
    public Object up(Message msg) {
        return null;
    }

    @Override
    public void up(MessageBatch batch) {
        // dropped, as each message
    }
}
