package io.ehrelay.codec;

import io.ehrelay.spi.MalformedFrameException;

/**
 * A serialized value named a class outside the allow-list, or broke a depth, array or reference limit.
 * The class's {@code readObject} never ran. The message names the class and the property that allows it.
 */
public final class RejectedClassException extends MalformedFrameException {

    private static final long serialVersionUID = 1L;

    private final String className;

    public RejectedClassException(String className, String message) {
        super(message);
        this.className = className;
    }

    /** The rejected class, or {@code null} when a size limit (not a class) was the reason. */
    public String className() {
        return className;
    }
}
