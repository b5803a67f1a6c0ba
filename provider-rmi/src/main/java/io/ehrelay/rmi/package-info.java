/**
 * Replication over Java RMI, drop-in for Ehcache's {@code net.sf.ehcache.distribution.RMI*} factories. Each node
 * exports a stock-compatible {@code CachePeer} per replicated cache (so stock nodes replicate to it and bootstrap
 * from it) and one ehrelay relay object; between two ehrelay nodes events travel as provider-api batches through
 * the relay, towards a stock node as Ehcache's own {@code RmiEventMessage}s.
 */
package io.ehrelay.rmi;
