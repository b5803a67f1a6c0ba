/** The node program of the Testcontainers suites: one CacheManager per container, driven over remote JMX. */
package io.ehrelay.it;
