package io.ehrelay.frameworks;

import java.util.HashSet;
import java.util.Set;
import javax.persistence.Cacheable;
import javax.persistence.CollectionTable;
import javax.persistence.Column;
import javax.persistence.ElementCollection;
import javax.persistence.Entity;
import javax.persistence.JoinColumn;
import javax.persistence.Table;

import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;

/** A cached entity of the test application: region {@code items}, its tags in {@code items.tags}. */
@Entity
@Table(name = "item")
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "items")
public class Item extends Tagged {

    @ElementCollection
    @CollectionTable(name = "item_tags", joinColumns = @JoinColumn(name = "item_id"))
    @Column(name = "tag")
    @Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "items.tags")
    private Set<String> tags = new HashSet<>();

    @Override
    public Set<String> getTags() {
        return tags;
    }
}
