package io.ehrelay.jgroups;

import java.io.DataInput;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.jgroups.Header;
import org.jgroups.auth.AuthToken;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.conf.ProtocolConfiguration;
import org.jgroups.protocols.AuthHeader;
import org.jgroups.util.Util;

/**
 * Replaces JGroups' JVM-wide reader of AUTH headers, which loads and constructs a token class named on the wire
 * for any process that reaches a member's port: a class named there is constructed only when it is the
 * {@code auth_class} of an AUTH protocol in a stack ehrelay started in this JVM; tokens known by number are read as
 * before. A refused header fails the message, counted with {@link ObjectMessageGuard#REFUSED}. Installed with
 * {@code refuseSerializedObjects=true} (the default); why: docs/jgroups.md, "Object messages".
 */
final class AuthHeaderGuard {

    /** Token classes named by the AUTH protocols of stacks started in this JVM. */
    private static final Set<String> ALLOWED = ConcurrentHashMap.newKeySet();
    private static volatile boolean installed;

    private AuthHeaderGuard() {
    }

    /** Admits the token class of each AUTH protocol of {@code stack} (its {@code auth_class} attribute). */
    static void allowTokensOf(List<ProtocolConfiguration> stack) {
        for (ProtocolConfiguration p : stack) {
            String name = p.getProtocolName();
            if (name.equals("AUTH") || name.endsWith(".AUTH")) {
                String tokenClass = p.getProperties().get("auth_class");
                if (tokenClass != null && !tokenClass.trim().isEmpty()) {
                    ALLOWED.add(Util.substituteVariable(tokenClass.trim()));
                }
            }
        }
    }

    /** Puts the guarded reader in JGroups' table of header types (idempotent, JVM-wide). */
    static synchronized void install() {
        if (installed) {
            return;
        }
        ObjectMessageGuard.replaceInTable(ClassConfigurator.class, "magicMap",
                "the guard against classes named in JGroups AUTH headers", "; set refuseSerializedObjects=false only "
                        + "if the members' ports are unreachable to others",
                new short[] {ClassConfigurator.getMagicNumber(AuthHeader.class)}, (Supplier<Header>) Guarded::new);
        installed = true;
    }

    /** An AUTH header that constructs only the tokens this JVM's stacks use. */
    static final class Guarded extends AuthHeader {

        @Override
        public Supplier<? extends Header> create() {
            return Guarded::new;
        }

        @Override
        public void readFrom(DataInput in) throws IOException, ClassNotFoundException {
            if (in.readByte() == 0) {
                token(null);
                return;
            }
            short magic = in.readShort();
            AuthToken t;
            if (magic >= 0) {
                Object registered = ClassConfigurator.create(magic);
                if (!(registered instanceof AuthToken)) {
                    ObjectMessageGuard.REFUSED.incrementAndGet();
                    throw new IOException("ehrelay: refused an AUTH header whose token is not a token ("
                            + registered.getClass().getName() + ")");
                }
                t = (AuthToken) registered;
            } else {
                String name = in.readUTF();
                if (!ALLOWED.contains(name)) {
                    ObjectMessageGuard.REFUSED.incrementAndGet();
                    throw new IOException("ehrelay: refused an AUTH header naming class " + name + ", which is not "
                            + "the auth_class of a JGroups stack this node started (refuseSerializedObjects=true)");
                }
                try {
                    t = (AuthToken) Class.forName(name, true, AuthHeaderGuard.class.getClassLoader())
                            .getDeclaredConstructor().newInstance();
                } catch (ReflectiveOperationException | ClassCastException e) {
                    throw new IOException("ehrelay: cannot create AUTH token " + name + ": " + e, e);
                }
            }
            t.readFrom(in);
            token(t);
        }
    }
}
