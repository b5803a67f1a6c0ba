package io.ehrelay.internal.engine;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import io.ehrelay.internal.RateLimitedLog;
import io.ehrelay.internal.codec.EventCodec;
import io.ehrelay.internal.metrics.CacheMetrics;
import io.ehrelay.spi.InboundHandler;
import net.sf.ehcache.Ehcache;

/**
 * The serving side of anti-entropy ({@link AntiEntropy}): a peer's round asks for a cache's digest (its last
 * removeAll and its {@value VersionTable#LEAVES} leaves), for the versions in a set of leaves, or for their
 * entries, as state requests whose name starts with {@link #PREFIX}, so every transport carries them unchanged.
 * Thread-safe.
 */
final class AntiEntropyServer {

    /** State requests with this prefix are anti-entropy requests (no cache name starts with a NUL). */
    static final String PREFIX = "\u0000ehrelay-ae\u0000";
    static final String DIGEST = PREFIX + "digest\u0000";
    static final String ENTRIES = PREFIX + "entries\u0000";
    /** As {@link #ENTRIES}, but each entry's version alone: a stamped remove or invalidation of its key. */
    static final String VERSIONS = PREFIX + "versions\u0000";
    static final int DIGEST_FORMAT = 1;

    private final String cacheManagerName;
    private final CacheBindings caches;
    private final RateLimitedLog warn;

    AntiEntropyServer(String cacheManagerName, CacheBindings caches, RateLimitedLog warn) {
        this.cacheManagerName = cacheManagerName;
        this.caches = caches;
        this.warn = warn;
    }

    /** Whether a state request is an anti-entropy request. */
    static boolean isRequest(String name) {
        return name.startsWith(PREFIX);
    }

    /**
     * Serves a peer's anti-entropy request.
     *
     * @throws IllegalArgumentException for a malformed request, or a cache this node does not replicate
     */
    InboundHandler.StateCursor open(String request) {
        if (request.startsWith(DIGEST)) {
            String name = request.substring(DIGEST.length());
            CacheBinding binding = binding(name);
            ByteBuffer out = ByteBuffer.allocate(1 + 16 + 4 + 8 * VersionTable.LEAVES);
            Version cleared = binding.versions.cleared();
            out.put((byte) DIGEST_FORMAT);
            out.putLong(cleared == null ? 0 : cleared.stamp).putLong(cleared == null ? 0 : cleared.origin);
            out.putInt(VersionTable.LEAVES);
            for (long leaf : binding.versions.leaves()) {
                out.putLong(leaf);
            }
            byte[] bytes = out.array();
            boolean[] sent = {false};
            return max -> {
                if (sent[0]) {
                    return null;
                }
                sent[0] = true;
                return bytes;
            };
        }
        boolean versionsOnly = request.startsWith(VERSIONS);
        if (versionsOnly || request.startsWith(ENTRIES)) {
            String[] parts = request.substring((versionsOnly ? VERSIONS : ENTRIES).length()).split("\u0000", 3);
            if (parts.length != 3) {
                throw new IllegalArgumentException("malformed anti-entropy request");
            }
            long maxBytes;
            try {
                maxBytes = Math.max(64 * 1024, Math.min(1L << 30, Long.parseLong(parts[0])));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("malformed anti-entropy request");
            }
            boolean[] leafSet = leavesOf(parts[1]);
            String name = parts[2];
            CacheBinding binding = binding(name);
            Ehcache cache = caches.resolve(name);
            CacheMetrics m = binding.metrics;
            // from a random leaf on: a round stopped by maxBytes is continued elsewhere by the next; the leaves
            // listed are bounded too (the asker bounds its request by its own versions, this node may hold more)
            int firstLeaf = ThreadLocalRandom.current().nextInt(VersionTable.LEAVES);
            Iterator<Map.Entry<Object, Version>> entries = binding.versions.entries(binding.versions.boundedLeaves(
                    leafSet, firstLeaf, 2 * AntiEntropy.keysPerRound(maxBytes)), firstLeaf).iterator();
            long[] total = {0};
            return maxChunkBytes -> {
                m.servedByCurrentThread();
                List<byte[]> parts2 = new ArrayList<>();
                int size = 0;
                while (entries.hasNext() && size < maxChunkBytes && total[0] < maxBytes) {
                    Map.Entry<Object, Version> e = entries.next();
                    byte[] ev = versionsOnly ? StateTransfer.version(name, e.getKey(), e.getValue(), m, warn)
                            : StateTransfer.entry(name, cache, binding.versions, e.getKey(), m, warn);
                    if (ev != null) {
                        parts2.add(ev);
                        size += ev.length;
                        total[0] += ev.length;
                    }
                }
                return parts2.isEmpty() ? null : EventCodec.batch(parts2, size);
            };
        }
        throw new IllegalArgumentException("unknown anti-entropy request");
    }

    private CacheBinding binding(String name) {
        Ehcache cache = caches.resolve(name);
        CacheBinding binding = cache == null ? null : caches.bound(name);
        if (binding == null) {
            throw new IllegalArgumentException("CacheManager " + cacheManagerName + StateTransfer.NO_LIVE_CACHE + name
                    + "' replicated here");
        }
        return binding;
    }

    static boolean[] leavesOf(String hex) {
        if (hex.length() != VersionTable.LEAVES / 4) {
            throw new IllegalArgumentException("anti-entropy request with a leaf set of " + hex.length() + " digits");
        }
        boolean[] out = new boolean[VersionTable.LEAVES];
        for (int i = 0; i < hex.length(); i++) {
            int nibble = Character.digit(hex.charAt(i), 16);
            if (nibble < 0) {
                throw new IllegalArgumentException("anti-entropy request with a malformed leaf set");
            }
            for (int b = 0; b < 4; b++) {
                out[i * 4 + b] = (nibble & (8 >> b)) != 0;
            }
        }
        return out;
    }
}
