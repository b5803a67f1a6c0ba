/** Peer directory (manual list, run-time registration) and automatic discovery by multicast heartbeat. */
package io.ehrelay.discovery;
