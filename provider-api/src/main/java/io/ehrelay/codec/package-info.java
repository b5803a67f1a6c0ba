/** Public: {@link io.ehrelay.codec.RejectedClassException}, what the allow-list refused (named in logs and metrics). */
package io.ehrelay.codec;
