/**
 * Replication metrics (Dropwizard Metrics) and their JMX ObjectNames: per CacheManager and per cache.
 */
package io.ehrelay.metrics;
