/** Internal: the Dropwizard metrics of a node and its caches, and their JMX export. Not an API. */
package io.ehrelay.internal.metrics;
