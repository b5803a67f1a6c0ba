package io.ehrelay.jgroups;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import io.ehrelay.spi.Clock;
import io.ehrelay.spi.MetricNames;
import io.ehrelay.spi.TransportMetrics;
import org.jgroups.Address;
import org.jgroups.Event;
import org.jgroups.Header;
import org.jgroups.Message;
import org.jgroups.View;
import org.jgroups.conf.ClassConfigurator;
import org.jgroups.protocols.EncryptHeader;
import org.jgroups.protocols.SYM_ENCRYPT;
import org.jgroups.stack.Protocol;
import org.jgroups.util.MessageBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Below SYM_ENCRYPT, drops the messages of a non-member encrypted under another key, and unencrypted ones, which
 * SYM_ENCRYPT would drop with an ERROR each; on a node without encryption, the encrypted messages of nodes that
 * have it. Each drop counts in {@code unauthorized}; a sender is said once a minute with its count
 * ({@link #WINDOW_MILLIS}). Members' messages go on as before. See docs/jgroups.md, "Security". Thread-safe.
 */
final class SecretMismatchGuard extends Protocol {

    /** At most one line per sender in this time. */
    static final long WINDOW_MILLIS = 60_000;
    /** The senders remembered for the window (the least recently heard from are forgotten first). */
    private static final int SENDERS = 1024;

    private static final Logger LOG = LoggerFactory.getLogger(SecretMismatchGuard.class);

    /** Why a sender's messages are dropped. */
    private enum Mismatch {
        OTHER_SECRET("encrypts with another key: its clusterSecret differs from this node's"),
        NO_SECRET_THERE("sends unencrypted messages: it has no clusterSecret, and this node has one"),
        NO_SECRET_HERE("sends encrypted messages: it has a clusterSecret, and this node has none");

        final String says;

        Mismatch(String says) {
            this.says = says;
        }
    }

    /** One sender's window: when its last line was written and how many messages were dropped since. */
    private static final class Window {
        long loggedNanos;
        long dropped;
    }

    private final SYM_ENCRYPT encrypt;
    private final short encryptId = ClassConfigurator.getProtocolId(SYM_ENCRYPT.class);
    private final TransportMetrics.Count unauthorized;
    private final String node;
    private final Clock clock;
    private volatile View view;
    /** Guarded by itself. */
    private final Map<Address, Window> windows = new LinkedHashMap<Address, Window>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<Address, Window> eldest) {
            return size() > SENDERS;
        }
    };

    /**
     * @param encrypt the stack's SYM_ENCRYPT, right above this; {@code null} on a node without a secret (then
     *                encrypted messages are the foreign ones)
     */
    SecretMismatchGuard(SYM_ENCRYPT encrypt, TransportMetrics metrics, String node, Clock clock) {
        this.encrypt = encrypt;
        this.unauthorized = metrics.count(MetricNames.UNAUTHORIZED);
        this.node = node;
        this.clock = clock;
    }

    @Override
    public Object down(Event evt) {
        if (evt.getType() == Event.VIEW_CHANGE) {
            view = evt.getArg();
        }
        return down_prot.down(evt);
    }

    @Override
    public Object up(Event evt) {
        if (evt.getType() == Event.VIEW_CHANGE) {
            view = evt.getArg();
        }
        return up_prot.up(evt);
    }

    @Override
    public Object up(Message msg) {
        if (dropped(msg)) {
            return null;
        }
        return up_prot.up(msg);
    }

    @Override
    public void up(MessageBatch batch) {
        batch.removeIf(this::dropped, true);
        if (!batch.isEmpty()) {
            up_prot.up(batch);
        }
    }

    private boolean dropped(Message msg) {
        Mismatch m = mismatch(msg);
        if (m == null) {
            return false;
        }
        unauthorized.mark();
        log(msg.getSrc(), m);
        return true;
    }

    /** What is wrong with {@code msg}, or {@code null} when it goes on. */
    private Mismatch mismatch(Message msg) {
        Header h = msg.getHeader(encryptId);
        if (encrypt == null) {
            return h instanceof EncryptHeader ? Mismatch.NO_SECRET_HERE : null;
        }
        if (h == null) {
            return Mismatch.NO_SECRET_THERE; // SYM_ENCRYPT drops every such message, with an ERROR each
        }
        if (!(h instanceof EncryptHeader)) {
            return null;
        }
        byte[] version = ((EncryptHeader) h).version();
        if (Arrays.equals(version, encrypt.symVersion())) {
            return null;
        }
        // another key from outside the view: SYM_ENCRYPT would reject it (an ERROR each), or, before this node has
        // a view, drop it quietly for want of that key; a member's message of another version stays SYM_ENCRYPT's
        View v = view;
        Address src = msg.getSrc();
        return v != null && src != null && v.containsMember(src) ? null : Mismatch.OTHER_SECRET;
    }

    private void log(Address sender, Mismatch m) {
        long now = clock.nanoTime();
        long dropped;
        synchronized (windows) {
            Window w = windows.get(sender);
            if (w == null) {
                w = new Window();
                w.loggedNanos = now;
                windows.put(sender, w);
                dropped = 0;
            } else if (now - w.loggedNanos >= WINDOW_MILLIS * 1_000_000L) {
                w.loggedNanos = now;
                dropped = w.dropped;
                w.dropped = 0;
            } else {
                w.dropped++;
                return;
            }
        }
        LOG.warn("ehrelay: CacheManager {}: JGroups node {}{} {}; set the same clusterSecret on every node (its "
                + "messages are dropped and counted in unauthorized{})", node, sender, physical(sender), m.says,
                dropped == 0 ? "" : "; " + dropped + " more since the last line");
    }

    /** " (host:port)" of a sender the transport knows, else "". */
    private String physical(Address sender) {
        try {
            Object pa = sender == null ? null : getTransport().getPhysicalAddressFromCache(sender);
            return pa == null ? "" : " (" + pa + ")";
        } catch (RuntimeException e) {
            return "";
        }
    }
}
