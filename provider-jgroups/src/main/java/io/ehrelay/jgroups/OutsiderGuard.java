package io.ehrelay.jgroups;

import java.util.LinkedHashSet;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.spi.TransportMetrics;
import org.jgroups.Address;
import org.jgroups.Event;
import org.jgroups.Header;
import org.jgroups.Message;
import org.jgroups.NioMessage;
import org.jgroups.View;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.UNICAST3;
import org.jgroups.protocols.UnicastHeader3;
import org.jgroups.protocols.pbcast.GMS;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Put right above the transport of a stack whose members do not authenticate: from a sender that has never been
 * in one of this node's views, drops the unicasts UNICAST3 would keep without bound (a data message that is not
 * the first of its connection, unless a membership message) and any unicast over {@link #MAX_OUTSIDER_PAYLOAD}
 * bytes. Members and former members are not touched; nothing is dropped before this node has a view. Drops are
 * counted in {@code rejected} and logged (rate-limited). Why and what it measured: docs/jgroups.md, "Limits of
 * these bounds".
 */
final class OutsiderGuard extends Protocol {

    /** The most a unicast from outside the view may carry. */
    static final int MAX_OUTSIDER_PAYLOAD = 64 * 1024;

    private static final Logger LOG = LoggerFactory.getLogger(OutsiderGuard.class);

    private final TransportMetrics metrics;
    private final String node;
    private final RateLimitedLog warn = new RateLimitedLog(LOG, 10_000);
    private final short unicast3 = ClassConfigurator.getProtocolId(
            UNICAST3.class);
    private final short gms = ClassConfigurator.getProtocolId(
            GMS.class);
    /** Everyone seen in this node's views, the most recent {@link #KNOWN} at most; guarded by itself. */
    private final LinkedHashSet<Address> known = new LinkedHashSet<>();
    private static final int KNOWN = 4096;
    private volatile boolean viewSeen;

    OutsiderGuard(TransportMetrics metrics, String node) {
        this.metrics = metrics;
        this.node = node;
    }

    @Override
    public Object down(Event evt) {
        if (evt.getType() == Event.VIEW_CHANGE) {
            viewed(evt.getArg());
        }
        return down_prot.down(evt);
    }

    @Override
    public Object up(Event evt) {
        if (evt.getType() == Event.VIEW_CHANGE) {
            viewed(evt.getArg());
        }
        return up_prot.up(evt);
    }

    private void viewed(View v) {
        synchronized (known) {
            for (Address a : v.getMembers()) {
                known.remove(a);
                known.add(a); // most recent last
            }
            while (known.size() > KNOWN) {
                known.remove(known.iterator().next());
            }
        }
        viewSeen = true;
    }

    private boolean everMember(Address a) {
        synchronized (known) {
            return known.contains(a);
        }
    }

    @Override
    public Object up(Message msg) {
        if (refused(msg)) {
            return null;
        }
        return up_prot.up(msg);
    }

    @Override
    public void up(MessageBatch batch) {
        batch.removeIf(this::refused, true);
        if (!batch.isEmpty()) {
            up_prot.up(batch);
        }
    }

    /** Whether {@code msg} is a unicast from a never-member that UNICAST3 would keep, or a large one. */
    private boolean refused(Message msg) {
        if (!viewSeen || msg.getDest() == null || msg.getSrc() == null || everMember(msg.getSrc())) {
            return false;
        }
        Header h = msg.getHeader(unicast3);
        // membership messages pass (a joiner's repeated join request, the other coordinator's in a merge of two
        // clusters that never met); they are small
        boolean kept = h instanceof UnicastHeader3
                && ((UnicastHeader3) h).type() == UnicastHeader3.DATA
                && !((UnicastHeader3) h).first() && msg.getHeader(gms) == null;
        int length = msg.hasArray() || msg instanceof NioMessage ? msg.getLength() : 0;
        if (!kept && length <= MAX_OUTSIDER_PAYLOAD) {
            return false;
        }
        metrics.markRejected();
        warn.warn("outsider", "ehrelay: CacheManager {}: dropped a JGroups unicast of {} bytes from {}, which has "
                + "never been a member ({}; counted in rejected). Without clusterSecret any process that reaches "
                + "the port can send to this node", node, length, msg.getSrc(), kept
                ? "JGroups would keep it until the channel stops" : "more than " + MAX_OUTSIDER_PAYLOAD + " bytes");
        return true;
    }
}
