package io.ehrelay.jgroups;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

import org.jgroups.DefaultMessageFactory;
import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.MessageFactory;
import org.jgroups.protocols.TP;
import org.jgroups.stack.Protocol;

/**
 * JGroups 5.3/5.4 only (loaded only there): the default message factory, except that object messages are read by
 * {@link ObjectMessageGuard.Guarded} and messages carrying an array by {@link PayloadGuard}'s readers, as asked.
 * Installed on one channel's transport.
 */
final class GuardedMessageFactory extends DefaultMessageFactory {

    private volatile boolean objects;
    private volatile boolean payloads;

    @Override
    @SuppressWarnings("unchecked")
    public <T extends Message> T create(short type) {
        if (objects && type == Message.OBJ_MSG) {
            return (T) new ObjectMessageGuard.Guarded();
        }
        Message guarded = payloads ? PayloadGuard.create(type) : null;
        return guarded != null ? (T) guarded : super.create(type);
    }

    /** Object messages guarded on {@code channel}'s transport. */
    static void installOn(JChannel channel) {
        on(channel).objects = true;
    }

    /** Payloads guarded on {@code channel}'s transport. */
    static void guardPayloadsOn(JChannel channel) {
        on(channel).payloads = true;
    }

    private static synchronized GuardedMessageFactory on(JChannel channel) {
        TP tp = channel.getProtocolStack().getTransport();
        if (tp.getMessageFactory() instanceof GuardedMessageFactory) {
            return (GuardedMessageFactory) tp.getMessageFactory();
        }
        GuardedMessageFactory f = new GuardedMessageFactory();
        MessageFactory old = tp.getMessageFactory();
        tp.setMessageFactory(f);
        // the channel's init() has run: protocols that build messages again from arrays (FRAG*, Encrypt,
        // COMPRESS, SERIALIZE, SEQUENCER) copied the transport's factory into a field of their own then
        for (Protocol p : channel.getProtocolStack().getProtocols()) {
            if (p != tp) {
                replaceFactory(p, old, f);
            }
        }
        return f;
    }

    /** Every field of {@code p} that holds {@code old} holds {@code f} afterwards. */
    static void replaceFactory(Object p, MessageFactory old, MessageFactory f) {
        for (Class<?> c = p.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field field : c.getDeclaredFields()) {
                if (field.getType() != MessageFactory.class
                        || Modifier.isStatic(field.getModifiers())) {
                    continue;
                }
                try {
                    field.setAccessible(true);
                    if (field.get(p) == old) {
                        field.set(p, f);
                    }
                } catch (ReflectiveOperationException | RuntimeException e) {
                    throw new IllegalStateException("ehrelay: cannot put its message readers in place in JGroups "
                            + "protocol " + c.getName() + " (field " + field.getName() + "): " + e, e);
                }
            }
        }
    }
}
