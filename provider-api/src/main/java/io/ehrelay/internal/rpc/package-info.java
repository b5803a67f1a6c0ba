/**
 * The request/response protocol shared by RMI, Hessian (HTTP) and JGroups — event
 * batches delivered (applied before the call returns) or posted (queued, applied in order while the next
 * travels), and paged state transfer. {@link io.ehrelay.internal.rpc.RpcService} is the receiving side,
 * {@link io.ehrelay.internal.rpc.PeerChannel} the sending side of one peer, {@link io.ehrelay.internal.rpc.RpcTransport}
 * the transport around them; a transport supplies only the calls over its wire. In-house for 0.x: it changes
 * with the transports of each release (docs/writing-a-transport.md).
 */
package io.ehrelay.internal.rpc;
