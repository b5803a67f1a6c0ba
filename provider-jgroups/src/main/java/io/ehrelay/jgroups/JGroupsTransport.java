package io.ehrelay.jgroups;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.rpc.RpcException;
import io.ehrelay.internal.rpc.RpcService;
import io.ehrelay.internal.rpc.RpcTransport;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.TransportContext;
import io.ehrelay.spi.TransportMetrics;
import org.jgroups.Address;
import org.jgroups.BytesMessage;
import org.jgroups.JChannel;
import org.jgroups.MergeView;
import org.jgroups.Message;
import org.jgroups.PhysicalAddress;
import org.jgroups.Receiver;
import org.jgroups.View;
import org.jgroups.blocks.MessageDispatcher;
import org.jgroups.blocks.RequestHandler;
import org.jgroups.blocks.RequestOptions;
import org.jgroups.blocks.ResponseMode;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.jmx.JmxConfigurator;
import org.jgroups.protocols.FD_SOCK2;
import org.jgroups.protocols.TP;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.stack.IpAddress;
import org.jgroups.util.Table;
import org.jgroups.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JGroups channel per CacheManager, shared by all its caches. The view is the peer list (reported to
 * provider-api on every view change); each member is a relay peer reached by unicast requests through a
 * {@link MessageDispatcher}: batches posted (applied in order on the member's apply thread) or delivered (applied
 * before the answer: synchronous replication), state transferred in pages. Replies are plain bytes.
 */
final class JGroupsTransport extends RpcTransport<JGroupsPeerChannel> implements RequestHandler, Receiver {

    static final String ENDPOINT_PREFIX = "jgroups:";
    private static final Logger LOG = LoggerFactory.getLogger(JGroupsTransport.class);
    /** Refusals a member can repeat at will: one line per member and 10 s, with the count of the others. */
    private static final RateLimitedLog REFUSALS =
            new RateLimitedLog(LOG, 10_000);

    static {
        ClassConfigurator.addIfAbsent(CallHeader.ID, CallHeader.class);
    }

    private final JGroupsSettings settings;
    private final boolean registerJmx;
    private TransportContext context;
    private JChannel channel;
    private MessageDispatcher dispatcher;
    private RpcService relay;
    private String clusterName;
    private volatile String localEndpoint;
    /** The bounds on accepted connections ({@code TCP} transports); {@code null} for the others. */
    private BoundedSocketFactory inboundSockets;
    private volatile View view;
    private boolean jmxRegistered;
    private TransportMetrics.Count postsDropped;

    private volatile boolean membersAuthenticate;

    JGroupsTransport(JGroupsSettings settings, boolean registerJmx) {
        this.settings = settings;
        this.registerJmx = registerJmx;
    }

    static String endpoint(Address a) {
        return ENDPOINT_PREFIX + (a instanceof UUID ? ((UUID) a).toStringLong() : a.toString());
    }

    @Override
    public synchronized void start(TransportContext ctx) throws Exception {
        this.context = ctx;
        startChannels(ctx);
        GuardedChannel built = GuardedChannel.build(settings, ctx);
        channel = built.channel;
        membersAuthenticate = built.membersAuthenticate;
        inboundSockets = built.inboundSockets;
        clusterName = settings.channelName != null ? settings.channelName
                : ctx.cacheManagerName() != null && !ctx.cacheManagerName().isEmpty()
                && !ctx.cacheManagerName().startsWith("__DEFAULT__") ? ctx.cacheManagerName()
                : JGroupsSettings.DEFAULT_CLUSTER;
        postsDropped = ctx.metrics().count(MetricNames.POSTS_DROPPED);
        relay = new RpcService(ctx.inbound(), ctx.maxFrameBytes(), ctx.threads("apply"),
                settings.callTimeoutMillis / 2, this::peerSaidHello, ctx.clock());
        dispatcher = new MessageDispatcher(channel, this);
        dispatcher.setReceiver(this);
        channel.connect(clusterName);
        if (inboundSockets != null
                && channel.getProtocolStack().getTransport().getSocketFactory() != inboundSockets) {
            LOG.warn("ehrelay: CacheManager {}: the JGroups transport replaced ehrelay's socket factory (JGroups' "
                    + "TLS does): maxInboundConnections and inboundBufferMaxBytes do not apply; the TLS handshake "
                    + "keeps peers without a trusted certificate out", ctx.cacheManagerName());
            inboundSockets = null;
        }
        if (inboundSockets != null) {
            BoundedSocketFactory sockets = inboundSockets;
            sockets.firstAcceptNow(); // no connection accepted while joining: in place from now on
            ctx.metrics().gauge(MetricNames.CONNECTIONS_IN, sockets::size);
            ctx.metrics().gauge(MetricNames.INBOUND_BUFFER_BYTES, sockets::budgetUsed);
        }
        localEndpoint = endpoint(channel.getAddress());
        if (registerJmx) {
            try {
                JmxConfigurator.registerChannel(channel, ManagementFactory.getPlatformMBeanServer(),
                        settings.jmxDomain, clusterName, true);
                jmxRegistered = true;
            } catch (Exception e) {
                LOG.warn("ehrelay: JGroups MBeans of cluster {} not registered: {}", clusterName, e.toString());
            }
        }
        viewAccepted(channel.getView());
        LOG.info("ehrelay: joined JGroups cluster '{}' as {} ({}), view {}", clusterName, channel.getAddressAsString(),
                localEndpoint, channel.getView());
    }

    @Override
    public String localEndpoint() {
        return localEndpoint;
    }

    @Override
    public String listeningOn() {
        JChannel c = channel;
        if (c == null || c.getAddress() == null) {
            return null;
        }
        try {
            TP tp = c.getProtocolStack().getTransport();
            StringBuilder sb = new StringBuilder().append(tp.getPhysicalAddressFromCache(c.getAddress()))
                    .append(" (JGroups ").append(tp.getClass().getSimpleName()).append(": members' messages)");
            FD_SOCK2 fd = c.getProtocolStack()
                    .findProtocol(FD_SOCK2.class);
            if (fd != null && fd.getActualBindPort() > 0) {
                sb.append(", ").append(fd.getBindAddress() == null ? "*" : fd.getBindAddress().getHostAddress())
                        .append(':').append(fd.getActualBindPort()).append(" (FD_SOCK2: failure detection)");
            }
            return sb.toString();
        } catch (RuntimeException | LinkageError e) {
            return null; // a JGroups version without these accessors: the start line goes without it
        }
    }

    String clusterName() {
        return clusterName;
    }

    JChannel channel() {
        return channel;
    }

    /** State transfers this node is serving now (diagnostics and tests). */
    int openTransfers() {
        return relay == null ? 0 : relay.openTransfers();
    }

    @Override
    public String peerAuthentication() {
        if (context != null && context.clusterSecret() != null) {
            return "clusterSecret: every message above discovery encrypted (SYM_ENCRYPT) with a key derived from it";
        }
        return membersAuthenticate ? "the stack's AUTH or encryption protocol, or JGroups TLS with client certificates"
                : null;
    }

    @Override
    public boolean provesClusterSecret() {
        return true;
    }

    /** Members are the channel's view: {@code registerPeer}/{@code unregisterPeer} are ignored (as stock's). */
    /** Posted batches are kept by JGroups until acknowledged: as the values' own arrays ({@link PiecesMessage}). */
    @Override
    public boolean sendsValuesByReference() {
        return true;
    }

    @Override
    public boolean registersPeers() {
        return false;
    }

    /** {@code connect} returns with the view: a bootstrap need not wait for the cluster to form. */
    @Override
    public boolean knowsPeersOnceStarted() {
        return true;
    }

    @Override
    public String normalizePeer(String configured) {
        if (!configured.startsWith(ENDPOINT_PREFIX)) {
            throw new IllegalArgumentException("JGroups peers are the channel's members (" + ENDPOINT_PREFIX
                    + "<uuid>), not " + configured);
        }
        UUID.fromString(configured.substring(ENDPOINT_PREFIX.length()));
        return configured;
    }

    @Override
    protected JGroupsPeerChannel newChannel(String endpoint) {
        Address address = UUID.fromString(endpoint.substring(ENDPOINT_PREFIX.length()));
        return new JGroupsPeerChannel(endpoint, address, dispatcher, localEndpoint, settings, context.threads("sender"),
                context.clock());
    }

    // ---- membership ------------------------------------------------------------------------------------------

    /**
     * The host of a member, from the transport's address cache, or {@code null} while it is not known yet.
     */
    private InetAddress hostOf(Address member) {
        JChannel ch = channel;
        if (ch == null || member == null) {
            return null;
        }
        PhysicalAddress pa = ch.getProtocolStack().getTransport().getPhysicalAddressFromCache(member);
        return pa instanceof IpAddress ? ((IpAddress) pa).getIpAddress() : null;
    }

    /**
     * Whether a member that did not authenticate (the stack has no AUTH or encryption) may be served: only a
     * host {@code unauthenticatedPeers} admits; a member whose host is not known yet is not served until it is.
     */
    private boolean admitted(Address member, String what) {
        if (membersAuthenticate) {
            return true;
        }
        InetAddress host = hostOf(member);
        if (host == null) {
            context.metrics().count(MetricNames.UNAUTHORIZED).mark();
            // keyed by the cluster, not the member: members that join and leave cannot grow the log's bookkeeping
            REFUSALS.warn("unknown-host:" + clusterName, "ehrelay: refused a {} from {} whose host is not known yet "
                    + "(counted in unauthorized)", what, member == null ? "?" : endpoint(member));
            return false;
        }
        return context.peerGate().admits(host, what);
    }

    /** Whether this node's own replication leaves a member out: its host is known and not admitted. */
    private boolean refusedMember(Address member) {
        if (membersAuthenticate || channel == null || member.equals(channel.getAddress())) {
            return false;
        }
        InetAddress host = hostOf(member);
        return host != null && !context.peerGate().admits(host, "member");
    }

    @Override
    public void viewAccepted(View newView) {
        if (newView == null || context == null) {
            return;
        }
        View previous = view;
        view = newView;
        List<String> members = new ArrayList<>();
        for (Address a : newView.getMembers()) {
            if (!refusedMember(a)) {
                members.add(endpoint(a));
            }
        }
        context.setPeers(members);
        if (previous != null) {
            LOG.info("ehrelay: JGroups cluster '{}' view {} ({} members)", clusterName, newView.getViewId(),
                    newView.size());
        }
        if (newView instanceof MergeView) {
            resyncAfterMerge((MergeView) newView);
        }
    }

    /**
     * The partition policy: every member pulls from one member (the coordinator) of each subgroup it was not part
     * of, and keeps, key by key, the newer write. Both sides pull, so what either side wrote while apart reaches
     * the other without waiting for anti-entropy (which may be off); nothing is removed wholesale.
     */
    private void resyncAfterMerge(MergeView merged) {
        Address self = channel == null ? null : channel.getAddress();
        LOG.info("ehrelay: JGroups cluster '{}' merged after a partition: {}", clusterName, merged.getSubgroups());
        if (self == null) {
            return;
        }
        for (View subgroup : merged.getSubgroups()) {
            if (subgroup.containsMember(self)) {
                continue;
            }
            Address source = subgroup.getCoord();
            if (source == null || !merged.containsMember(source)) {
                continue;
            }
            LOG.info("ehrelay: {} was apart from {}; resynchronising its replicated caches from {}", localEndpoint,
                    subgroup.getMembers(), source);
            context.resyncFrom(endpoint(source));
        }
    }

    // ---- receiving ---------------------------------------------------------------------------------------------

    @Override
    public Object handle(Message msg) {
        CallHeader h = msg.getHeader(CallHeader.ID);
        String from = msg.getSrc() == null ? "?" : endpoint(msg.getSrc());
        if (!admitted(msg.getSrc(), "request")) {
            return Replies.error("ehrelay: refused: this node accepts unauthenticated members only from the hosts "
                    + "its unauthenticatedPeers setting admits");
        }
        if (h == null || !(msg instanceof BytesMessage)) {
            context.metrics().markMalformedFrame();
            REFUSALS.warn("not-a-call:" + clusterName, "ehrelay: refused a request from {} that is not an ehrelay call "
                    + "(counted in malformedFrames)", from);
            return Replies.error("not an ehrelay call");
        }
        try {
            switch (h.op) {
                case CallHeader.HELLO:
                    relay.hello(from);
                    return Replies.OK;
                case CallHeader.DELIVER:
                    relay.deliver(from, payload(msg), PayloadGuard.release(msg));
                    return Replies.OK;
                case CallHeader.POST:
                    try {
                        relay.post(from, payload(msg), PayloadGuard.release(msg));
                    } catch (RpcException e) {
                        // the sender does not wait for posts: count and log here what it will not hear about
                        postsDropped.mark();
                        LOG.warn("ehrelay: dropped a batch posted by {} (counted in postsDropped): {}", from,
                                e.getMessage());
                        throw e;
                    }
                    return Replies.OK;
                case CallHeader.OPEN_STATE:
                    return Replies.value(relay.openState(h.cacheName));
                case CallHeader.NEXT_STATE:
                    return Replies.value(relay.nextState(h.transferId, h.maxChunkBytes));
                default:
                    context.metrics().markMalformedFrame();
                    return Replies.error("unknown ehrelay call " + h.op);
            }
        } catch (RpcException e) {
            return Replies.error(e.getMessage());
        } catch (RuntimeException e) {
            LOG.warn("ehrelay: call {} from {} failed", h, from, e);
            return Replies.error(e.toString());
        }
    }

    /** The message's payload as it is, without a copy (it may be part of a larger array, e.g. its frame). */
    private static ByteBuffer payload(Message msg) throws RpcException {
        byte[] array = msg.getArray();
        if (array == null || msg.getLength() == 0) {
            throw new RpcException("no batch");
        }
        return ByteBuffer.wrap(array, msg.getOffset(), msg.getLength());
    }

    // ---- stop --------------------------------------------------------------------------------------------------

    /**
     * Makes sure what this node posted reached the other members before its channel closes. Batches are posted without
     * an answer: what the dispatcher handed over before stopping may still be in UNICAST3's send window (on UDP a lost
     * datagram waits for its retransmission), and closing the channel would drop it. UNICAST3 acknowledges on its timer
     * (up to {@code xmit_interval} later), so rather than wait for that, each member holding unacknowledged messages is
     * sent a HELLO and its answer awaited: one sender's unicasts are delivered in order, so the answer comes after
     * every earlier post was taken. A post lost on the wire is requested again on the member's retransmission timer,
     * which asks only for what was still missing at its previous turn: the wait is bounded by four of UNICAST3's
     * {@code xmit_interval} (2 s with ehrelay's stacks; at least 1 s), as a member that vanished without leaving
     * the view yet never answers.
     */
    private void flushPosts() {
        JChannel ch = channel;
        UNICAST3 unicast = ch == null ? null : ch.getProtocolStack().findProtocol(UNICAST3.class);
        View view = ch == null ? null : ch.getView();
        if (unicast == null || view == null || dispatcher == null) {
            return;
        }
        List<Address> behind = new ArrayList<>();
        for (Address member : view.getMembers()) {
            Table<Message> window = member.equals(ch.getAddress()) ? null : unicast.getSendWindow(member);
            if (window != null && !window.isEmpty()) {
                behind.add(member);
            }
        }
        if (behind.isEmpty()) {
            return;
        }
        long millis = Math.max(1000, 4 * unicast.getXmitInterval());
        Message hello = new BytesMessage(null, new byte[0]).putHeader(CallHeader.ID,
                new CallHeader(CallHeader.HELLO));
        try {
            // anycast: one unicast per member, through UNICAST3 behind the posts (a multicast would not be)
            dispatcher.castMessage(behind, hello,
                    new RequestOptions(ResponseMode.GET_ALL, millis).anycasting(true));
        } catch (Exception e) {
            LOG.debug("ehrelay: {} could not confirm its last posts reached {}: {}", localEndpoint, behind,
                    e.toString());
        }
    }

    @Override
    public void stop() {
        if (!markStopped()) {
            return;
        }
        stopChannels(2000);
        if (relay != null) {
            relay.close(2000);
        }
        flushPosts();
        if (channel != null && channel.getUpHandler() != null) {
            channel.setUpHandler(new ClosingUpHandler(channel.getUpHandler()));
        }
        if (dispatcher != null) {
            dispatcher.stop();
        }
        if (channel != null) {
            if (jmxRegistered) {
                try {
                    JmxConfigurator.unregisterChannel(channel, ManagementFactory.getPlatformMBeanServer(),
                            settings.jmxDomain, clusterName);
                } catch (Exception e) {
                    LOG.debug("ehrelay: JGroups MBeans of cluster {} not unregistered: {}", clusterName, e.toString());
                }
            }
            channel.close();
        }
        if (inboundSockets != null) {
            inboundSockets.closeAll();
        }
    }
}
