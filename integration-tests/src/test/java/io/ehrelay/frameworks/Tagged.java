package io.ehrelay.frameworks;

import java.util.Set;
import javax.persistence.Column;
import javax.persistence.Id;
import javax.persistence.MappedSuperclass;
import javax.persistence.Version;

/**
 * What both entities of the test application share: an id, a name, an optimistic-lock version and a cached
 * collection of tags. They differ only in their tables and cache regions, which each subclass maps.
 */
@MappedSuperclass
public abstract class Tagged {

    @Id
    private Long id;

    private String name;

    @Version
    @Column(name = "row_version")
    private int version;

    public Long getId() {
        return id;
    }

    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    public int getVersion() {
        return version;
    }

    /** The cached collection (its region is the subclass's). */
    public abstract Set<String> getTags();
}
