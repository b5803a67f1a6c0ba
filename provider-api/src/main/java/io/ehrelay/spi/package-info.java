/**
 * For transport authors: what a transport module implements ({@link io.ehrelay.spi.Transport}) and what the
 * node hands it ({@link io.ehrelay.spi.TransportContext}). Depends on nothing of ehrelay outside itself.
 */
package io.ehrelay.spi;
