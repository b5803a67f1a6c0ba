/** What a transport module implements: moving bytes between nodes ({@link io.ehrelay.spi.Transport}). */
package io.ehrelay.spi;
