package io.ehrelay.internal.engine;

/**
 * The JMX view of a node's convergence, {@code io.ehrelay:type=Convergence,cacheManager=<cm>,transport=<t>}:
 * run an anti-entropy check now, and read when each peer was last found equal. Public only because JMX reads
 * the interface.
 */
public interface ConvergenceMBean {

    /**
     * Compares every replicated cache with every peer now (repairing what this node holds older, as a scheduled
     * round does), logs the result at INFO and returns it: per peer, the keys that differed (-1: the check
     * failed), e.g. {@code "10.0.0.6:40001=0 10.0.0.7:40001=3"}.
     */
    String checkNow();

    /** Per peer, when anti-entropy last found every cache equal (ISO-8601, UTC), or "never". */
    String getLastAgreement();

    /** Keys found different (both ways, all peers and caches) by the last check or round. */
    long getDifferingKeys();
}
