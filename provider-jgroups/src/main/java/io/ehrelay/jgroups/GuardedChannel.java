package io.ehrelay.jgroups;

import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.ehrelay.internal.InboundBudget;
import io.ehrelay.spi.TransportContext;
import org.jgroups.JChannel;
import org.jgroups.Version;
import org.jgroups.blocks.cs.BaseServer;
import org.jgroups.conf.ProtocolConfiguration;
import org.jgroups.protocols.BasicTCP;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.jgroups.protocols.TCP;
import org.jgroups.protocols.TP;
import org.jgroups.protocols.UDP;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.pbcast.NAKACK2;
import org.jgroups.stack.Protocol;
import org.jgroups.stack.ProtocolStack;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's JGroups channel, built from its settings with ehrelay's guards in place and not yet connected: the
 * stack kept on this host when its members do not authenticate ({@link StackExposure}), SYM_ENCRYPT keyed by
 * {@code clusterSecret}, every listener bound like the transport ({@link JGroupsListeners}), Java-serialized
 * objects refused ({@code refuseSerializedObjects}), {@link OutsiderGuard} and {@link SecretMismatchGuard}, and on
 * a {@code TCP} transport the bounds on accepted connections ({@link BoundedSocketFactory}).
 */
final class GuardedChannel {

    private static final Logger LOG = LoggerFactory.getLogger(GuardedChannel.class);

    final JChannel channel;
    /** Whether the stack admits only members that authenticate (a secret, AUTH, encryption or TLS certificates). */
    final boolean membersAuthenticate;
    /** The bounds on accepted connections ({@code TCP} transports); {@code null} for the others. */
    final BoundedSocketFactory inboundSockets;

    private GuardedChannel(JChannel channel, boolean membersAuthenticate, BoundedSocketFactory inboundSockets) {
        this.channel = channel;
        this.membersAuthenticate = membersAuthenticate;
        this.inboundSockets = inboundSockets;
    }

    static GuardedChannel build(JGroupsSettings settings, TransportContext ctx) throws Exception {
        JChannel channel;
        List<ProtocolConfiguration> stack = JGroupsStacks.build(settings);
        // a secret puts SYM_ENCRYPT into the stack (below); TLS with client certificates counts too
        boolean authenticated = ctx.clusterSecret() != null || StackExposure.authenticates(stack);
        if (!authenticated) {
            if (!ctx.peerGate().admitsOtherHosts()) {
                boolean looksBeyond = StackExposure.discoversOtherHosts(stack);
                String replaced = StackExposure.keepOnThisHost(stack, settings);
                if (replaced != null) {
                    String line = "ehrelay: CacheManager {}: JGroups listens on 127.0.0.1 (instead of {}): without "
                            + "clusterSecret only members on this host may join{}. To replicate across hosts, set "
                            + "clusterSecret on cacheManagerPeerProviderFactory (the same on every member)";
                    if (looksBeyond) {
                        // a stack meant for several hosts: members elsewhere will not replicate with this node
                        LOG.warn(line, ctx.cacheManagerName(), replaced,
                                ", and members on other hosts will not replicate with this one");
                    } else {
                        LOG.info(line, ctx.cacheManagerName(), replaced, "");
                    }
                }
            } else {
                LOG.warn("ehrelay: CacheManager {}: JGroups members do not authenticate (no clusterSecret, no AUTH or "
                        + "encryption in the stack): JGroups cannot refuse a host where it listens, so a process on "
                        + "any host that reaches its address can join the group. ehrelay neither serves nor sends to "
                        + "members on hosts unauthenticatedPeers does not admit; clusterSecret keeps them out of the "
                        + "group", ctx.cacheManagerName());
            }
        }
        Path keyStore = ctx.clusterSecret() == null ? null
                : JGroupsStacks.encryptWith(stack, ctx.clusterSecret());
        try {
            channel = new JChannel(JGroupsStacks.configurator(stack));
        } finally {
            if (keyStore != null) {
                Files.deleteIfExists(keyStore); // SYM_ENCRYPT read its key while the channel was built
            }
        }
        // FD_SOCK2 and the like listen where the transport does; diagnostics asked for likewise (they start on connect)
        JGroupsListeners.bindLikeTransport(channel.getProtocolStack(), ctx.cacheManagerName());
        if (settings.refuseSerializedObjects) {
            if (ObjectMessageGuard.perChannel()) {
                LOG.info("ehrelay: JGroups object messages carrying Java-serialized objects are refused on this "
                        + "channel (refuseSerializedObjects=true)");
            } else if (!ObjectMessageGuard.installedJvmWide()) {
                LOG.info("ehrelay: JGroups object messages carrying Java-serialized objects are refused in this JVM "
                        + "(refuseSerializedObjects=true)");
            }
            ObjectMessageGuard.install(channel);
            AuthHeaderGuard.allowTokensOf(stack);
            AuthHeaderGuard.install(); // classes named in AUTH headers: only this JVM's stacks' tokens
            ctx.metrics().gauge("serializedObjectsRefused", ObjectMessageGuard.REFUSED::get);
        }
        if (!authenticated) {
            // no AUTH or encryption: outsiders' unicasts reach UNICAST3, which would keep large ones unbounded
            ProtocolStack ps = channel.getProtocolStack();
            ps.insertProtocol(new OutsiderGuard(ctx.metrics(), ctx.cacheManagerName()),
                    ProtocolStack.Position.ABOVE, ps.getTransport().getClass());
        }
        guardAgainstOtherSecrets(channel, ctx, authenticated);
        return new GuardedChannel(channel, authenticated, boundAcceptedConnections(channel, settings, ctx));
    }

    /**
     * Puts {@link SecretMismatchGuard} below the SYM_ENCRYPT that {@code clusterSecret} added, or, on a node whose
     * members do not authenticate at all, where SYM_ENCRYPT would be: a node with another secret, or none, is then
     * named once a minute instead of in an ERROR of JGroups' for each of its messages.
     */
    private static void guardAgainstOtherSecrets(JChannel channel, TransportContext ctx, boolean authenticated)
            throws Exception {
        ProtocolStack ps = channel.getProtocolStack();
        SYM_ENCRYPT encrypt = ps.findProtocol(SYM_ENCRYPT.class);
        Class<? extends Protocol> above;
        if (ctx.clusterSecret() != null) {
            if (encrypt == null) {
                return;
            }
            above = SYM_ENCRYPT.class;
        } else if (!authenticated) {
            encrypt = null;
            above = ps.findProtocol(NAKACK2.class) != null
                    ? NAKACK2.class
                    : ps.findProtocol(UNICAST3.class) != null
                    ? UNICAST3.class : null;
            if (above == null) {
                return;
            }
        } else {
            return; // the stack's own AUTH or encryption: its messages are the stack's to judge
        }
        ps.insertProtocol(new SecretMismatchGuard(encrypt, ctx.metrics(), ctx.cacheManagerName(), ctx.clock()),
                ProtocolStack.Position.BELOW, above);
    }
    /**
     * Puts {@link BoundedSocketFactory} in place on a {@code TCP} transport: at most {@code maxInboundConnections}
     * accepted connections, and {@code inboundBufferMaxBytes} for the payloads they are reading
     * ({@link PayloadGuard}).
     */
    private static BoundedSocketFactory boundAcceptedConnections(JChannel channel, JGroupsSettings settings,
                                                           TransportContext ctx) {
        TP tp = channel.getProtocolStack().getTransport();
        if (tp.getClass() != TCP.class) {
            if (!(tp instanceof UDP)) {
                LOG.warn("ehrelay: CacheManager {}: JGroups transport {}: maxInboundConnections and "
                        + "inboundBufferMaxBytes apply to TCP only; connections to this one are bounded by JGroups "
                        + "alone", ctx.cacheManagerName(), tp.getName());
            }
            return null;
        }
        long maxLength = Math.max(0, ((BasicTCP) tp).getMaxLength());
        InboundBudget budget = new InboundBudget(settings.inboundBufferMaxBytes(maxLength), ctx.clock());
        BoundedSocketFactory sockets = new BoundedSocketFactory(settings.maxInboundConnections, maxLength, budget, ctx.metrics(),
                ctx.cacheManagerName(), ctx.clock());
        Field server = transportServer();
        sockets.beforeFirstAccept(() -> readFramesWhole(tp, server));
        tp.setSocketFactory(sockets);
        PayloadGuard.install(channel);
        return sockets;
    }
    /** JGroups' {@code TCP.srv}: the server whose receiver {@link FrameReader} stands in front of. */
    private static Field transportServer() {
        try {
            Field f = TCP.class.getDeclaredField("srv");
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("ehrelay: this JGroups version's TCP has no server field 'srv' ("
                    + Version.printVersion() + "); ehrelay cannot bound what its connections make it "
                    + "allocate. Supported: JGroups 5.3 to 5.5", e);
        }
    }
    /** Puts {@link FrameReader} between {@code tp}'s server and {@code tp} (once, before any frame is read). */
    private static void readFramesWhole(TP tp, Field server) {
        BaseServer srv;
        try {
            srv = (BaseServer) server.get(tp);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
        if (srv != null && !(srv.receiver() instanceof FrameReader)) {
            srv.receiver(new FrameReader(srv.receiver()));
        }
    }
}
