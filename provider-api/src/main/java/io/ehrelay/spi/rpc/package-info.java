/**
 * For transport authors: the request/response protocol shared by RMI, Hessian (HTTP) and JGroups — event
 * batches delivered (applied before the call returns) or posted (queued, applied in order while the next
 * travels), and paged state transfer. {@link io.ehrelay.spi.rpc.RpcService} is the receiving side,
 * {@link io.ehrelay.spi.rpc.PeerChannel} the sending side of one peer, {@link io.ehrelay.spi.rpc.RpcTransport}
 * the transport around them; a transport supplies only the calls over its wire.
 */
package io.ehrelay.spi.rpc;
