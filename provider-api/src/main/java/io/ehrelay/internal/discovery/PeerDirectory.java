package io.ehrelay.internal.discovery;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import io.ehrelay.spi.Peer;

/**
 * Who a node's peers are: the manual list plus peers registered at run time ({@code registerPeer}) plus those
 * heard by multicast heartbeat, which expire when their heartbeats stop, plus what a DNS name resolved to last.
 * The node's own endpoint is never listed. Reads ({@link #peers()}) are a volatile snapshot, cheap enough for every batch. Thread-safe.
 */
public final class PeerDirectory {

    private final Set<String> fixed = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> discovered = new ConcurrentHashMap<>();
    private volatile Set<String> transportPeers = Collections.emptySet();
    private volatile Set<String> resolved = Collections.emptySet();
    private final long timeoutNanos;
    private volatile String self;
    private volatile List<Peer> snapshot = Collections.emptyList();
    private volatile Consumer<List<Peer>> listener = peers -> { };

    public PeerDirectory(List<String> manual, long peerTimeoutMillis) {
        fixed.addAll(manual);
        this.timeoutNanos = peerTimeoutMillis * 1_000_000L;
        rebuild();
    }

    /** The endpoint of this node, excluded from the peers. */
    public void setSelf(String endpoint) {
        this.self = endpoint;
        rebuild();
    }

    public List<Peer> peers() {
        return snapshot;
    }

    /**
     * Called with the new peer list after every change (and once now); e.g. the transport's connect-ahead. Calls
     * come one at a time, in the order of the changes, the first with the list as it is when the listener is set:
     * a change made meanwhile on another thread (a JGroups view as the node starts) is never followed by the list
     * from before it.
     */
    public synchronized void onChange(Consumer<List<Peer>> changes) {
        this.listener = changes;
        changes.accept(snapshot);
    }

    public void register(String endpoint) {
        if (fixed.add(endpoint)) {
            rebuild();
        }
    }

    public void unregister(String endpoint) {
        boolean changed = fixed.remove(endpoint);
        changed |= discovered.remove(endpoint) != null;
        if (changed) {
            rebuild();
        }
    }

    /** The peers the transport found itself (a JGroups view) replace those it reported before. */
    public void replacePeers(Collection<String> endpoints) {
        Set<String> now = Collections.unmodifiableSet(new HashSet<>(endpoints));
        if (!now.equals(transportPeers)) {
            transportPeers = now;
            rebuild();
        }
    }

    /** What the DNS name resolved to now replaces what it resolved to before. */
    public void replaceResolved(Collection<String> endpoints) {
        Set<String> now = Collections.unmodifiableSet(new LinkedHashSet<>(endpoints));
        if (!now.equals(resolved)) {
            resolved = now;
            rebuild();
        }
    }

    /** A heartbeat was heard from {@code endpoint}. */
    public void heard(String endpoint, long nowNanos) {
        if (discovered.put(endpoint, nowNanos) == null) {
            rebuild();
        }
    }

    /** Forgets discovered peers not heard from within the timeout. */
    public void expire(long nowNanos) {
        if (discovered.entrySet().removeIf(e -> nowNanos - e.getValue() > timeoutNanos)) {
            rebuild();
        }
    }

    private synchronized void rebuild() {
        Set<String> all = new LinkedHashSet<>(fixed);
        all.addAll(discovered.keySet());
        all.addAll(transportPeers);
        all.addAll(resolved);
        all.remove(self);
        List<Peer> out = new ArrayList<>(all.size());
        for (String e : all) {
            out.add(new Peer(e));
        }
        List<Peer> now = Collections.unmodifiableList(new ArrayList<>(out));
        boolean changed = !now.equals(snapshot);
        snapshot = now;
        if (changed) {
            listener.accept(now);
        }
    }
}
