/** Internal: the wire format (event batches) and the guarded value serialization. Not an API. */
package io.ehrelay.internal.codec;
