package io.ehrelay.jgroups;

import org.jgroups.DefaultMessageFactory;
import org.jgroups.JChannel;
import org.jgroups.Message;

/**
 * JGroups 5.3/5.4 only (loaded only there): the default message factory, except that object messages are read by
 * {@link ObjectMessageGuard.Guarded}. Installed on one channel's transport.
 */
final class GuardedMessageFactory extends DefaultMessageFactory {

    @Override
    @SuppressWarnings("unchecked")
    public <T extends Message> T create(short type) {
        return type == Message.OBJ_MSG ? (T) new ObjectMessageGuard.Guarded() : super.create(type);
    }

    static void installOn(JChannel channel) {
        channel.getProtocolStack().getTransport().setMessageFactory(new GuardedMessageFactory());
    }
}
