package io.ehrelay.frameworks;

import java.util.Set;

/** What the nodes do with both entities: they have the same shape, only their cache regions differ. */
public interface Tagged {

    Long getId();

    String getName();

    void setName(String name);

    int getVersion();

    Set<String> getTags();
}
