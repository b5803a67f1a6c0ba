/** Internal: who the peers are — manual lists, registrations, multicast heartbeats. Not an API. */
package io.ehrelay.internal.discovery;
