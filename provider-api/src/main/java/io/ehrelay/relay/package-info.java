/**
 * The relay protocol shared by request/response transports (RMI, HTTP): event batches delivered (applied
 * before the call returns) or posted (queued, applied in order while the next travels), and paged state
 * transfer. {@link io.ehrelay.relay.RelayService} is the receiving side, {@link io.ehrelay.relay.PeerChannel}
 * the sending side of one peer; a transport supplies only the calls themselves.
 */
package io.ehrelay.relay;
