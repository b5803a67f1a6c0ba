package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicLong;

import org.jgroups.Message;
import org.jgroups.MessageFactory;
import org.jgroups.ObjectMessage;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.util.ObjectWrapperSerializable;
import org.jgroups.util.SizeStreamable;

/**
 * JGroups reads an {@link ObjectMessage}'s payload while it takes the message off the wire, before any protocol
 * (AUTH or ENCRYPT included) or ehrelay sees it: a payload wrapped as {@link ObjectWrapperSerializable} goes
 * through Java serialization, and a class named on the wire is loaded and instantiated. So anyone who can send a
 * packet to a member's port could run a deserialization gadget there. The guard replaces JGroups' reader of
 * object messages (JVM-wide: JGroups' message factory is static) with one that accepts only the payload types
 * JGroups registers by number — what its own protocols send (digests, sequence number lists) — and refuses the
 * rest before reading it; JGroups then drops the message and logs the failure.
 */
final class ObjectMessageGuard extends MessageFactory {

    /** Object messages refused in this JVM. */
    static final AtomicLong REFUSED = new AtomicLong();
    private static final short SERIALIZED = ClassConfigurator.getMagicNumber(ObjectWrapperSerializable.class);
    private static volatile boolean installed;

    private ObjectMessageGuard() {
    }

    static boolean installed() {
        return installed;
    }

    /** Installs the guard for every JGroups channel of this JVM (idempotent). */
    static synchronized void install() {
        if (!installed) {
            creators[Message.OBJ_MSG] = Guarded::new;
            installed = true;
        }
    }

    /** An object message that refuses Java-serialized payloads and classes named on the wire. */
    static final class Guarded extends ObjectMessage {

        @Override
        public void readPayload(DataInput in) throws IOException, ClassNotFoundException {
            if (in.readByte() == 0) {
                obj = null;
                return;
            }
            short magic = in.readShort();
            if (magic == -1 || magic == SERIALIZED) {
                REFUSED.incrementAndGet();
                throw new IOException("ehrelay: refused an object message from " + getSrc() + " carrying "
                        + (magic == -1 ? "a class named on the wire" : "a Java-serialized object")
                        + " (refuseSerializedObjects=true)");
            }
            SizeStreamable s = ClassConfigurator.create(magic);
            s.readFrom(in);
            obj = s;
        }
    }
}
