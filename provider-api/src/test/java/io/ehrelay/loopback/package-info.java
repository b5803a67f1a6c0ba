/** An in-memory transport between CacheManagers of one JVM, for the contract suite and other tests. */
package io.ehrelay.loopback;
