/**
 * Replication over HTTP(S): each node serves one endpoint (the JDK's built-in HTTP server) that takes Hessian 2
 * calls whose only argument is an {@link io.ehrelay.hessian.Envelope} carrying provider-api batches; the
 * Hessian serializer on both sides admits no other class.
 */
package io.ehrelay.hessian;
