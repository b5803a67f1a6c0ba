package io.ehrelay.it11;

import java.io.Serializable;

/** An application class outside every allow-list: a peer must refuse it, count it and drop the key. */
public final class Unlisted implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String text;

    public Unlisted(String text) {
        this.text = text;
    }

    @Override
    public String toString() {
        return "Unlisted(" + text + ")";
    }
}
