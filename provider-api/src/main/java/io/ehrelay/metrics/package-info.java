/** Public: the JMX ObjectNames of ehrelay's metrics ({@link io.ehrelay.metrics.ObjectNames}), what monitoring reads. */
package io.ehrelay.metrics;
