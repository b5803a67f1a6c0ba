/** Base classes of the Ehcache SPI implementations that each transport's public factories extend. */
package io.ehrelay.provider;
