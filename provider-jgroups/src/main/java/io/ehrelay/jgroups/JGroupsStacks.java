package io.ehrelay.jgroups;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import javax.crypto.spec.SecretKeySpec;

import io.ehrelay.spi.ClusterSecret;
import org.jgroups.annotations.Component;
import org.jgroups.annotations.Property;
import org.jgroups.conf.ConfiguratorFactory;
import org.jgroups.conf.ProtocolConfiguration;
import org.jgroups.conf.ProtocolStackConfigurator;
import org.jgroups.conf.XmlConfigurator;
import org.jgroups.util.Util;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The protocol stack of a node's channel: the shipped UDP stack by default, a JGroups 5 XML file ({@code file=}),
 * or the old module's inline {@code connect=} string, translated from JGroups 3 (protocols JGroups 5 no longer has
 * are replaced by their successors, attributes it no longer knows are dropped and logged); then the provider's
 * address properties applied to the transport and discovery protocols.
 */
final class JGroupsStacks {

    static final String UDP_STACK = "ehrelay-jgroups-udp.xml";
    static final String TCP_STACK = "ehrelay-jgroups-tcp.xml";
    static final String DNS_STACK = "ehrelay-jgroups-dns.xml";

    private static final Logger LOG = LoggerFactory.getLogger(JGroupsStacks.class);

    /** JGroups' defaults for the attributes {@link #checkFragmentsFitCredits} reads. */
    private static final long DEFAULT_FRAG_SIZE = 60_000;
    private static final long DEFAULT_MAX_CREDITS = 5_000_000;

    /** JGroups 3 protocols that JGroups 5 lacks, and what replaces them ({@code null}: left out). */
    private static final Map<String, String[]> SUCCESSORS = Map.ofEntries(
            Map.entry("MERGE", new String[] {"MERGE3"}),
            Map.entry("MERGE2", new String[] {"MERGE3"}),
            Map.entry("NAKACK", new String[] {"pbcast.NAKACK2"}),
            Map.entry("pbcast.NAKACK", new String[] {"pbcast.NAKACK2"}),
            Map.entry("UNICAST", new String[] {"UNICAST3"}),
            Map.entry("UNICAST2", new String[] {"UNICAST3"}),
            Map.entry("FC", new String[] {"UFC", "MFC"}),
            Map.entry("TCP_NIO", new String[] {"TCP_NIO2"}),
            Map.entry("ENCRYPT", new String[] {"SYM_ENCRYPT"}),
            // ehrelay transfers state itself; flushing is not needed for it
            Map.entry("pbcast.STREAMING_STATE_TRANSFER", new String[0]),
            Map.entry("STREAMING_STATE_TRANSFER", new String[0]),
            Map.entry("pbcast.STATE_TRANSFER", new String[0]),
            Map.entry("STATE_TRANSFER", new String[0]),
            Map.entry("pbcast.FLUSH", new String[0]),
            Map.entry("FLUSH", new String[0]));

    /** The bundler attribute that makes JGroups send to every member from one thread. */
    static final String SINGLE_SENDER = "bundler.use_single_sender_thread";

    /** JGroups' system property for the transport's address, which takes precedence over the stack's. */
    static final String BIND_ADDR_PROPERTY = "jgroups.bind_addr";

    private JGroupsStacks() {
    }

    /** The stack the settings name, with the address overrides applied. */
    static List<ProtocolConfiguration> build(JGroupsSettings s) throws Exception {
        List<ProtocolConfiguration> stack;
        if (s.file != null) {
            if (s.connect != null) {
                LOG.warn("ehrelay: both file= and connect= are set; using file={} as the old module did", s.file);
            }
            stack = fromFile(s.file);
        } else if (s.connect != null) {
            stack = fromConnect(s.connect);
        } else if (s.dnsName != null) {
            // a DNS name and no stack: the shipped stack that finds members by DNS
            stack = fromFile(DNS_STACK);
        } else {
            stack = fromFile(UDP_STACK);
        }
        StackExposure.applyOverrides(stack, s);
        checkFragmentsFitCredits(stack);
        JGroupsListeners.diagnosticsOffUnlessAsked(stack);
        senderPerMember(stack, singleSenderOption());
        return stack;
    }

    /** {@code stack} as JGroups' channel constructor takes it. */
    static ProtocolStackConfigurator configurator(List<ProtocolConfiguration> stack) {
        return new ProtocolStackConfigurator() {
            @Override
            public String getProtocolStackString() {
                return stack.toString();
            }

            @Override
            public List<ProtocolConfiguration> getProtocolStack() {
                return stack;
            }
        };
    }

    /**
     * Whether the JGroups on the class path has {@link #SINGLE_SENDER} (5.4 and later, where it is on by default;
     * 5.3's per-destination bundler always has a thread per member).
     */
    static boolean singleSenderOption() {
        try {
            Class.forName("org.jgroups.protocols.BaseBundler").getDeclaredField("use_single_sender_thread");
            return true;
        } catch (ClassNotFoundException | NoSuchFieldException | LinkageError e) {
            return false;
        }
    }

    /**
     * A TCP transport's per-destination bundler gets a sending thread per member unless the stack says otherwise.
     * With one thread for all, a member that vanished without a word (a container stopped, a host gone) stalls
     * every send: each retransmission to it waits out a connect ({@code sock_conn_timeout}, 2 s), nothing else
     * leaves meanwhile, the live members' heartbeats stop and they suspect each other. Measured in
     * DnsContainersIT (two of four members stopped at once): the two left split into two singleton views and did
     * not merge within 60 s.
     *
     * @return whether the attribute was set
     */
    static boolean senderPerMember(List<ProtocolConfiguration> stack, boolean optionExists) {
        if (!optionExists || stack.isEmpty()) {
            return false;
        }
        ProtocolConfiguration tp = stack.get(0);
        Map<String, String> props = tp.getProperties();
        String bundler = props.getOrDefault("bundler_type", "per-destination");
        boolean perDestination = bundler.equals("per-destination") || bundler.equals("pd");
        if (!tp.getProtocolName().endsWith("TCP") || !perDestination || props.containsKey(SINGLE_SENDER)) {
            return false;
        }
        props.put(SINGLE_SENDER, "false");
        return true;
    }

    /**
     * Flow control (UFC, MFC) holds a message back until the receiver granted credits for all of its bytes, and
     * never grants more than {@code max_credits}: a message larger than that waits forever and replication to
     * that member stops. FRAG bounds the messages flow control sees, so its {@code frag_size} must be smaller.
     *
     * @throws IllegalArgumentException naming both attributes when it is not
     */
    static void checkFragmentsFitCredits(List<ProtocolConfiguration> stack) {
        ProtocolConfiguration frag = null;
        for (ProtocolConfiguration p : stack) {
            if (p.getProtocolName().startsWith("FRAG")) {
                frag = p;
            }
        }
        if (frag == null) {
            return;
        }
        long fragSize = bytes(frag, "frag_size", DEFAULT_FRAG_SIZE);
        for (ProtocolConfiguration p : stack) {
            String name = p.getProtocolName();
            if (!name.equals("UFC") && !name.equals("MFC")) {
                continue;
            }
            long credits = bytes(p, "max_credits", DEFAULT_MAX_CREDITS);
            if (fragSize > 0 && credits > 0 && fragSize >= credits) {
                throw new IllegalArgumentException(frag.getProtocolName() + " frag_size (" + fragSize + " bytes) must be "
                        + "smaller than " + name + " max_credits (" + credits + " bytes): flow control would hold a "
                        + "message that large back forever");
            }
        }
    }

    /** A size attribute ({@code 2M}, {@code 60K}, {@code ${prop:4M}}); its default when absent, -1 when unreadable. */
    private static long bytes(ProtocolConfiguration p, String attribute, long absent) {
        String value = p.getProperties().get(attribute);
        if (value == null) {
            return absent;
        }
        try {
            return Util.readBytesLong(Util.substituteVariable(value.trim()));
        } catch (RuntimeException e) {
            return -1; // JGroups reports what it cannot read when it builds the protocol
        }
    }

    /** A JGroups 5 XML stack: a classpath resource, a file or a URL. */
    static List<ProtocolConfiguration> fromFile(String file) throws Exception {
        try (InputStream resource = JGroupsStacks.class.getClassLoader().getResourceAsStream(file)) {
            if (resource != null) {
                return new ArrayList<>(XmlConfigurator.getInstance(resource).getProtocolStack());
            }
        }
        return new ArrayList<>(ConfiguratorFactory.getStackConfigurator(file).getProtocolStack());
    }

    /**
     * The old module's inline stack: {@code PROTOCOL(attr=value;attr=value):PROTOCOL:...}, translated to JGroups 5.
     *
     * @throws IllegalArgumentException naming the part that cannot be read or has no JGroups 5 counterpart
     */
    static List<ProtocolConfiguration> fromConnect(String connect) {
        List<ProtocolConfiguration> stack = new ArrayList<>();
        for (String part : splitTopLevel(connect.trim())) {
            String text = part.trim();
            if (text.isEmpty()) {
                continue;
            }
            int open = text.indexOf('(');
            String name = (open < 0 ? text : text.substring(0, open)).trim();
            Map<String, String> attributes = new LinkedHashMap<>();
            if (open >= 0) {
                if (!text.endsWith(")")) {
                    throw new IllegalArgumentException("'" + text + "' has no closing parenthesis");
                }
                for (String pair : text.substring(open + 1, text.length() - 1).split(";")) {
                    if (pair.isBlank()) {
                        continue;
                    }
                    int eq = pair.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException("'" + pair + "' in " + name + " is not attribute=value");
                    }
                    attributes.put(pair.substring(0, eq).trim(), pair.substring(eq + 1).trim());
                }
                JGroupsListeners.renameDiagnostics(attributes);
            }
            String[] successors = protocolClass(name) != null ? new String[] {name} : SUCCESSORS.get(name);
            if (successors == null) {
                throw new IllegalArgumentException("protocol " + name + " does not exist in JGroups 5 and has no"
                        + " known successor; use a JGroups 5 stack file (file=) instead");
            }
            if (successors.length == 0) {
                LOG.info("ehrelay: JGroups 3 protocol {} left out of the stack (ehrelay transfers state itself)", name);
            } else if (!successors[0].equals(name)) {
                LOG.info("ehrelay: JGroups 3 protocol {} replaced by {}", name, String.join(" + ", successors));
            }
            for (String successor : successors) {
                stack.add(new ProtocolConfiguration(successor, known(successor, attributes)));
            }
        }
        if (stack.isEmpty()) {
            throw new IllegalArgumentException("no protocols");
        }
        if (stack.stream().noneMatch(p -> p.getProtocolName().equals("UNICAST3"))) {
            int nakack = indexOf(stack, "pbcast.NAKACK2");
            stack.add(nakack < 0 ? stack.size() : nakack + 1, new ProtocolConfiguration("UNICAST3", new LinkedHashMap<>()));
            LOG.info("ehrelay: added UNICAST3 to the connect= stack (replication sends to each member)");
        }
        if (stack.stream().noneMatch(p -> p.getProtocolName().startsWith("FRAG"))) {
            stack.add(new ProtocolConfiguration("FRAG4", new LinkedHashMap<>()));
            LOG.info("ehrelay: added FRAG4 to the connect= stack (batches are larger than a datagram)");
        }
        return stack;
    }

    /**
     * {@code clusterSecret}: inserts SYM_ENCRYPT below the first reliable-delivery protocol (NAKACK2, else
     * UNICAST3), so that every message above discovery — a JOIN included — is encrypted with an AES-256 key
     * derived from the secret: a node without the secret can neither read the members' messages nor send one
     * they accept, and never becomes a member. SYM_ENCRYPT reads its key from a key store: this writes one
     * (PKCS12, readable by this process only, random password) that the caller deletes once the channel is built.
     *
     * @return the key store file to delete
     * @throws IllegalArgumentException when the stack encrypts already (SYM_ENCRYPT or ASYM_ENCRYPT)
     */
    static Path encryptWith(List<ProtocolConfiguration> stack, ClusterSecret secret)
            throws Exception {
        for (ProtocolConfiguration p : stack) {
            if (p.getProtocolName().endsWith("SYM_ENCRYPT")) {
                throw new IllegalArgumentException("the JGroups stack encrypts already (" + p.getProtocolName()
                        + "): give either clusterSecret or the stack's own encryption, not both");
            }
        }
        int at = -1;
        for (String below : new String[] {"pbcast.NAKACK2", "NAKACK2", "UNICAST3"}) {
            at = indexOf(stack, below);
            if (at >= 0) {
                break;
            }
        }
        if (at < 0) {
            throw new IllegalArgumentException("clusterSecret needs a stack with pbcast.NAKACK2 or UNICAST3, to put "
                    + "SYM_ENCRYPT below it");
        }
        byte[] key = secret.proof("ehrelay jgroups SYM_ENCRYPT key");
        char[] password = new BigInteger(130, new SecureRandom()).toString(32).toCharArray();
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setEntry("ehrelay", new KeyStore.SecretKeyEntry(
                new SecretKeySpec(key, "AES")), new KeyStore.PasswordProtection(password));
        Path file = Files.createTempFile("ehrelay-jgroups-", ".p12");
        try {
            try {
                Files.setPosixFilePermissions(file,
                        PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException e) {
                file.toFile().setReadable(false, false);
                file.toFile().setReadable(true, true);
            }
            try (OutputStream out = Files.newOutputStream(file)) {
                ks.store(out, password);
            }
        } catch (Exception e) {
            Files.deleteIfExists(file);
            throw e;
        }
        Map<String, String> attrs = new HashMap<>();
        attrs.put("keystore_name", file.toString());
        attrs.put("keystore_type", "PKCS12");
        attrs.put("store_password", new String(password));
        attrs.put("key_password", new String(password));
        attrs.put("alias", "ehrelay");
        stack.add(at, new ProtocolConfiguration("SYM_ENCRYPT", attrs));
        return file;
    }

    static int indexOf(List<ProtocolConfiguration> stack, String name) {
        for (int i = 0; i < stack.size(); i++) {
            if (stack.get(i).getProtocolName().equals(name)) {
                return i;
            }
        }
        return -1;
    }

    private static List<String> splitTopLevel(String connect) {
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int i = 0; i < connect.length(); i++) {
            char c = connect.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
                if (depth < 0) {
                    throw new IllegalArgumentException("unbalanced ')' at position " + i);
                }
            } else if (c == ':' && depth == 0) {
                parts.add(connect.substring(start, i));
                start = i + 1;
            }
        }
        if (depth != 0) {
            throw new IllegalArgumentException("unbalanced '(' in the stack");
        }
        parts.add(connect.substring(start));
        return parts;
    }

    static Class<?> protocolClass(String name) {
        for (String candidate : new String[] {"org.jgroups.protocols." + name, name}) {
            try {
                return Class.forName(candidate, false, JGroupsStacks.class.getClassLoader());
            } catch (ClassNotFoundException | LinkageError e) {
                // next
            }
        }
        return null;
    }

    /** The attributes JGroups 5's protocol knows; the others are logged and dropped. */
    private static Map<String, String> known(String protocol, Map<String, String> attributes) {
        Set<String> names = attributeNames(protocolClass(protocol));
        Map<String, String> kept = new LinkedHashMap<>();
        List<String> dropped = new ArrayList<>();
        for (Map.Entry<String, String> e : attributes.entrySet()) {
            if (names.contains(e.getKey())) {
                kept.put(e.getKey(), e.getValue());
            } else {
                dropped.add(e.getKey());
            }
        }
        if (!dropped.isEmpty()) {
            LOG.warn("ehrelay: JGroups 5 {} has no attribute(s) {}; left out", protocol, dropped);
        }
        return kept;
    }

    private static Set<String> attributeNames(Class<?> type) {
        Set<String> names = new TreeSet<>();
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                Property p = f.getAnnotation(Property.class);
                if (p != null) {
                    names.add(p.name().isEmpty() ? f.getName() : p.name());
                }
                Component component = f.getAnnotation(Component.class);
                if (component != null) {
                    String prefix = component.name().isEmpty() ? f.getName() : component.name();
                    for (String inner : attributeNames(f.getType())) {
                        names.add(prefix + "." + inner);
                    }
                }
            }
            for (Method m : c.getDeclaredMethods()) {
                Property p = m.getAnnotation(Property.class);
                if (p != null) {
                    names.add(p.name().isEmpty() ? Util.methodNameToAttributeName(m.getName()) : p.name());
                }
            }
        }
        return names;
    }
}
