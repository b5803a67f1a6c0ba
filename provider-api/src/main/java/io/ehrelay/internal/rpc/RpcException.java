package io.ehrelay.internal.rpc;

import java.io.IOException;

/** A relay call that the receiving node refused or could not complete; the message is for the caller. */
public class RpcException extends IOException {

    private static final long serialVersionUID = 1L;

    public RpcException(String message) {
        super(message);
    }
}
