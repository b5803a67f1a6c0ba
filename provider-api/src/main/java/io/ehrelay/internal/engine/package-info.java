/**
 * Internal: the replication node of one CacheManager and its pieces (see docs/architecture.md). Not an API; may
 * change in any release.
 */
package io.ehrelay.internal.engine;
