/** Internal: typed, immutable settings parsed strictly from the {@code Properties} Ehcache hands to factories. */
package io.ehrelay.internal.config;
