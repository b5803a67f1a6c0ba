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

/** A cached entity of the test application: region {@code notes}, its tags in {@code notes.tags}. */
@Entity
@Table(name = "note")
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "notes")
public class Note extends Tagged {

    @ElementCollection
    @CollectionTable(name = "note_tags", joinColumns = @JoinColumn(name = "note_id"))
    @Column(name = "tag")
    @Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "notes.tags")
    private Set<String> tags = new HashSet<>();

    @Override
    public Set<String> getTags() {
        return tags;
    }
}
