/** Internal: the per-CacheManager replication node, its bounded queue and shared dispatcher. */
package io.ehrelay.engine;
