/** Typed, immutable configuration parsed strictly from the {@code Properties} Ehcache hands to factories. */
package io.ehrelay.config;
