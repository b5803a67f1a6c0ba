package io.ehrelay.hessian;

import java.io.Serializable;

/**
 * The only object a Hessian call to an ehrelay endpoint may carry: who sends, and the call's arguments
 * (a batch, a cache name, a transfer id, a chunk size). Hessian maps it field by field; nothing else is
 * instantiated on the receiving side.
 */
public final class Envelope implements Serializable {

    private static final long serialVersionUID = 1L;

    String from;
    String cacheName;
    long transferId;
    int maxChunkBytes;
    byte[] payload;

    public Envelope() {
    }

    static Envelope of(String from, byte[] payload) {
        Envelope e = new Envelope();
        e.from = from;
        e.payload = payload;
        return e;
    }
}
