package io.ehrelay.contract;

import java.io.Serializable;
import java.util.Objects;

/** An application value class that a node admits through the {@code allowedClasses} property. */
public final class AllowedValue implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String name;
    private final int amount;

    public AllowedValue(String name, int amount) {
        this.name = name;
        this.amount = amount;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof AllowedValue && ((AllowedValue) o).name.equals(name) && ((AllowedValue) o).amount == amount;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, amount);
    }
}
