package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.IOException;
import java.lang.reflect.Field;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.jgroups.JChannel;
import org.jgroups.Message;
import org.jgroups.MessageFactory;
import org.jgroups.ObjectMessage;
import org.jgroups.Version;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.util.ObjectWrapperSerializable;
import org.jgroups.util.SizeStreamable;

/**
 * Keeps Java serialization off JGroups' wire: JGroups reads an {@link ObjectMessage}'s payload as it takes the
 * message off the wire, before any protocol (AUTH or ENCRYPT included) sees it, and a payload wrapped as
 * {@link ObjectWrapperSerializable} would load and instantiate a class named by the sender. The guard accepts
 * only the payload types JGroups registers by number (what its own protocols send) and refuses the rest before
 * reading it. Installed per channel on JGroups 5.3 and 5.4 ({@link GuardedMessageFactory}), and in the JVM-wide
 * message table on 5.5 and later; see docs/jgroups.md, "Object messages".
 */
final class ObjectMessageGuard {

    /** Object messages refused in this JVM. */
    static final AtomicLong REFUSED = new AtomicLong();
    private static final short SERIALIZED = ClassConfigurator.getMagicNumber(ObjectWrapperSerializable.class);
    private static volatile boolean installedJvmWide;

    private ObjectMessageGuard() {
    }

    /** Whether this JGroups keeps one message factory per transport (5.3, 5.4) rather than one per JVM (5.5+). */
    static boolean perChannel() {
        return MessageFactory.class.isInterface();
    }

    /** Whether the JVM-wide guard (JGroups 5.5+) is already in place. */
    static boolean installedJvmWide() {
        return installedJvmWide;
    }

    /**
     * Installs the guard for {@code channel} (before it connects): on its transport with JGroups 5.3/5.4, for the
     * whole JVM (idempotent) with JGroups 5.5+.
     */
    static void install(JChannel channel) {
        if (perChannel()) {
            GuardedMessageFactory.installOn(channel);
        } else {
            installJvmWide();
        }
    }

    private static synchronized void installJvmWide() {
        if (installedJvmWide) {
            return;
        }
        replaceReaders("the guard against Java-serialized JGroups object messages", "; set "
                + "refuseSerializedObjects=false only if the members' ports are unreachable to others",
                new short[] {Message.OBJ_MSG}, Guarded::new);
        installedJvmWide = true;
    }

    /**
     * JGroups 5.5+: puts {@code readers} in JGroups' JVM-wide table of message readers, one per type in
     * {@code types}.
     *
     * @throws IllegalStateException naming {@code what} (and {@code advice}) when this JGroups has no such table
     */
    @SafeVarargs
    static void replaceReaders(String what, String advice, short[] types, Supplier<? extends Message>... readers) {
        replaceInTable(MessageFactory.class, "creators", what, advice, types, readers);
    }

    /**
     * Puts {@code entries} in a JVM-wide table of suppliers that JGroups keeps in the static field {@code field} of
     * {@code owner} (what it creates while it reads bytes off the wire), one at each index in {@code slots}.
     *
     * @throws IllegalStateException naming {@code what} (and {@code advice}) when this JGroups has no such table
     */
    static void replaceInTable(Class<?> owner, String field, String what, String advice, short[] slots,
                               Supplier<?>... entries) {
        try {
            Field table = owner.getDeclaredField(field);
            table.setAccessible(true);
            Object[] suppliers = (Object[]) table.get(null);
            for (int i = 0; i < slots.length; i++) {
                suppliers[slots[i]] = entries[i];
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("ehrelay: cannot install " + what + " in this JGroups version ("
                    + Version.printVersion() + "): " + e + advice, e);
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
