/** The wire format: event batches, values with an allow-list guarded serialization fallback, stream frames. */
package io.ehrelay.codec;
