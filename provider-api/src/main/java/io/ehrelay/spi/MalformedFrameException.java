package io.ehrelay.spi;

/**
 * A frame or event that cannot be decoded safely: truncated, oversized, garbled, or of an unknown version.
 * Nothing from such a frame reaches a cache; receivers count it in {@code rejected} and log it.
 */
public class MalformedFrameException extends Exception {

    private static final long serialVersionUID = 1L;

    public MalformedFrameException(String message) {
        super(message);
    }

    public MalformedFrameException(String message, Throwable cause) {
        super(message, cause);
    }
}
