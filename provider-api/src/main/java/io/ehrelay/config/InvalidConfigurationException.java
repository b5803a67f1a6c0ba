package io.ehrelay.config;

import net.sf.ehcache.CacheException;

/**
 * Thrown when a property handed to an ehrelay factory is unknown or malformed. The message names the
 * property, the value given and what is accepted, so that the fix is obvious from the log line.
 */
public class InvalidConfigurationException extends CacheException {

    private static final long serialVersionUID = 1L;

    public InvalidConfigurationException(String message) {
        super(message);
    }
}
