package io.ehrelay.relay;

import java.io.IOException;

/** A relay call that the receiving node refused or could not complete; the message is for the caller. */
public class RelayException extends IOException {

    private static final long serialVersionUID = 1L;

    public RelayException(String message) {
        super(message);
    }
}
