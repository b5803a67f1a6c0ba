package io.ehrelay.internal.engine;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import io.ehrelay.internal.discovery.PeerDirectory;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ehcache's {@code registerPeer} / {@code unregisterPeer} calls on a node's peer directory: an entry in any spelling
 * the transport understands ({@link Transport#normalizePeer}); ignored, with one WARN, by a transport that finds its
 * members itself ({@link Transport#registersPeers()}). Thread-safe.
 */
final class PeerRegistrations {

    private static final Logger LOG = LoggerFactory.getLogger(PeerRegistrations.class);

    private final String cacheManager;
    private final String scheme;
    private final String transportName;
    /** The node's transport and directory once it is configured, else {@code null}. */
    private final Supplier<Transport> transport;
    private final Supplier<PeerDirectory> directory;
    private final AtomicBoolean warned = new AtomicBoolean();

    PeerRegistrations(String cacheManager, String scheme, String transportName, Supplier<Transport> transport,
                      Supplier<PeerDirectory> directory) {
        this.cacheManager = cacheManager;
        this.scheme = scheme;
        this.transportName = transportName;
        this.transport = transport;
        this.directory = directory;
    }

    /** @throws CacheException naming the accepted formats when {@code entry} names no peer */
    void register(String entry) {
        Transport t = registering("registerPeer", entry);
        if (t != null) {
            directory.get().register(normalize(t, entry));
        }
    }

    void unregister(String entry) {
        Transport t = registering("unregisterPeer", entry);
        if (t != null) {
            directory.get().unregister(normalize(t, entry));
        }
    }

    /** The transport, when it takes registered peers; {@code null} when the call is ignored. */
    private Transport registering(String call, String entry) {
        Transport t = transport.get();
        if (t == null) {
            throw new CacheException("ehrelay: CacheManager " + cacheManager + " has no " + scheme
                    + " peer provider configured");
        }
        if (t.registersPeers()) {
            return t;
        }
        if (warned.compareAndSet(false, true)) {
            LOG.warn("ehrelay: {}({}) ignored: {} peers of CacheManager {} are the members the transport finds "
                    + "itself (configure its discovery instead); later calls are ignored without a word",
                    call, entry, transportName, cacheManager);
        }
        return null;
    }

    private String normalize(Transport t, String entry) {
        try {
            return t.normalizePeer(entry);
        } catch (IllegalArgumentException e) {
            throw new CacheException("ehrelay: " + transportName + " cannot register peer '" + entry + "': "
                    + e.getMessage(), e);
        }
    }
}
