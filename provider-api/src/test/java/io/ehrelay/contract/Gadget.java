package io.ehrelay.contract;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.Serializable;

/**
 * Stands in for a deserialization gadget: records whether its {@code readObject} ever ran. It is outside every
 * default allow-list, so a node must reject it before instantiating it.
 */
public final class Gadget implements Serializable {

    private static final long serialVersionUID = 1L;
    public static volatile boolean readObjectRan;

    private final String payload;

    public Gadget(String payload) {
        this.payload = payload;
    }

    public String payload() {
        return payload;
    }

    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        readObjectRan = true;
        in.defaultReadObject();
    }
}
