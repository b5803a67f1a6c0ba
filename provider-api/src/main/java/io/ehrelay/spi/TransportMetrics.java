package io.ehrelay.spi;

import java.util.function.Supplier;

/**
 * The part of the node's metrics a transport writes to: its own counts and gauges (published under the
 * CacheManager's MBean names like every ehrelay metric) and the two shared counts a transport detects itself.
 * Thread-safe.
 */
public interface TransportMetrics {

    /** A count of the transport's own (e.g. {@code connectFailures}), created on first use, published as a meter. */
    Count count(String metric);

    /** A value of the transport's own (e.g. {@code connectionsIn}), read when monitoring asks. */
    <T> void gauge(String metric, Supplier<T> value);

    /** A frame or request that was damaged or not ehrelay's: counted in {@code malformedFrames}. */
    void markMalformedFrame();

    /** A value the transport itself refused (e.g. a class outside the allow-list): counted in {@code rejected}. */
    void markRejected();

    /** One count. */
    interface Count {
        void mark();

        long value();
    }
}
