package io.ehrelay.it;

/**
 * How a test drives a container node, over the same remote JMX connection it reads the metrics with.
 * Times are wall-clock microseconds (containers share the host's clock).
 */
public interface NodeControlMBean {

    /** The node's replication endpoint, e.g. {@code node-a:40001}. */
    String getEndpoint();

    /** Puts {@code count} elements of {@code size} bytes (keys {@code from…}); returns first and last put time. */
    long[] write(String cache, int from, int count, int size);

    /** Elements that arrived in {@code cache} by replication so far: count, first and last arrival time. */
    long[] arrivals(String cache);

    /** Forgets the arrival counts of {@code cache}. */
    void resetArrivals(String cache);

    /** Checks keys {@code from…from+count-1}: returns {missing, values that differ from what the writer put}. */
    int[] verify(String cache, int from, int count, int size);

    /** Removes every element of the cache (replicated as a removeAll) and collects garbage. */
    void clear(String cache);

    /** Elements in the cache. */
    int size(String cache);

    /** Peak heap of this node's JVM, bytes. */
    long getPeakHeap();
}
