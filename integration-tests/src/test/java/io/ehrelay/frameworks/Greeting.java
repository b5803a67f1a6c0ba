package io.ehrelay.frameworks;

import java.io.Serializable;

/** The value the Spring caches hold: an application class, read from the shared database. */
public final class Greeting implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String key;
    private final String text;

    public Greeting(String key, String text) {
        this.key = key;
        this.text = text;
    }

    public String key() {
        return key;
    }

    public String text() {
        return text;
    }

    @Override
    public String toString() {
        return key + "=" + text;
    }
}
