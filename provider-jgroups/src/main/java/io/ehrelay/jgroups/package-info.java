/**
 * Replication over a JGroups 5.5 channel (one per CacheManager): the view is the peer list, and each member is a
 * relay peer reached by unicast requests whose batches are the messages' byte payloads; drop-in factories for
 * the old {@code ehcache-jgroupsreplication} module.
 */
package io.ehrelay.jgroups;
