/**
 * The TCP transport: length-prefixed frames over {@code java.nio} socket channels. Users name the four public
 * factories of this package in {@code ehcache.xml}; everything else is internal.
 */
package io.ehrelay.tcp;
