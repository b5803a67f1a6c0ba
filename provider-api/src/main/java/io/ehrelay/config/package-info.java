/** Public: the configuration error and the policies users name in {@code ehcache.xml}. */
package io.ehrelay.config;
