package io.ehrelay.spi;

/** The replicated operations. The byte code is part of the wire format: never renumber. */
public enum Op {
    /** Put or update carrying the element (key, value and metadata); applied with {@code put(element, true)}. */
    PUT(1),
    /** Put or update replicated as an invalidation: the peer removes its copy of the key. */
    INVALIDATE(2),
    /** Remove of a key. */
    REMOVE(3),
    /** Remove of every element of the cache. */
    REMOVE_ALL(4);

    private final int code;

    Op(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The operation of a wire code. */
    public static Op of(int code) throws MalformedFrameException {
        switch (code) {
            case 1: return PUT;
            case 2: return INVALIDATE;
            case 3: return REMOVE;
            case 4: return REMOVE_ALL;
            default: throw new MalformedFrameException("unknown operation code " + code);
        }
    }
}
