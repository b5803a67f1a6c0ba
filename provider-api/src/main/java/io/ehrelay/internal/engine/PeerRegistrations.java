package io.ehrelay.internal.engine;

import java.util.concurrent.atomic.AtomicBoolean;

import io.ehrelay.internal.discovery.PeerDirectory;
import io.ehrelay.spi.Transport;
import net.sf.ehcache.CacheException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ehcache's {@code registerPeer} / {@code unregisterPeer} calls on a node's peer directory: an entry in any spelling
 * the transport understands ({@link Transport#normalizePeer}); ignored, with one WARN, by a transport that finds its
 * members itself ({@link Transport#registersPeers()}). Built once the node is configured. Thread-safe.
 */
final class PeerRegistrations {

    private static final Logger LOG = LoggerFactory.getLogger(PeerRegistrations.class);

    private final String cacheManager;
    private final String transportName;
    private final Transport transport;
    private final PeerDirectory directory;
    private final AtomicBoolean warned = new AtomicBoolean();

    PeerRegistrations(String cacheManager, String transportName, Transport transport, PeerDirectory directory) {
        this.cacheManager = cacheManager;
        this.transportName = transportName;
        this.transport = transport;
        this.directory = directory;
    }

    /** @throws CacheException naming the accepted formats when {@code entry} names no peer */
    void register(String entry) {
        if (registering("registerPeer", entry)) {
            directory.register(normalize(entry));
        }
    }

    void unregister(String entry) {
        if (registering("unregisterPeer", entry)) {
            directory.unregister(normalize(entry));
        }
    }

    /** Whether the transport takes registered peers; when it does not, the call is ignored (one WARN). */
    private boolean registering(String call, String entry) {
        if (transport.registersPeers()) {
            return true;
        }
        if (warned.compareAndSet(false, true)) {
            LOG.warn("ehrelay: {}({}) ignored: {} peers of CacheManager {} are the members the transport finds "
                    + "itself (configure its discovery instead); later calls are ignored without a word",
                    call, entry, transportName, cacheManager);
        }
        return false;
    }

    private String normalize(String entry) {
        try {
            return transport.normalizePeer(entry);
        } catch (IllegalArgumentException e) {
            throw new CacheException("ehrelay: " + transportName + " cannot register peer '" + entry + "': "
                    + e.getMessage(), e);
        }
    }
}
