package io.ehrelay.frameworks;

import java.util.HashSet;
import java.util.Set;

import javax.persistence.Cacheable;
import javax.persistence.CollectionTable;
import javax.persistence.Column;
import javax.persistence.ElementCollection;
import javax.persistence.Entity;
import javax.persistence.Id;
import javax.persistence.JoinColumn;
import javax.persistence.Table;
import javax.persistence.Version;

import org.hibernate.annotations.Cache;
import org.hibernate.annotations.CacheConcurrencyStrategy;

/** A cached entity of the test application: region {@code notes}, its tags in {@code notes.tags}. */
@Entity
@Table(name = "note")
@Cacheable
@Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "notes")
public class Note implements Tagged {

    @Id
    private Long id;

    private String name;

    @Version
    @Column(name = "row_version")
    private int version;

    @ElementCollection
    @CollectionTable(name = "note_tags", joinColumns = @JoinColumn(name = "note_id"))
    @Column(name = "tag")
    @Cache(usage = CacheConcurrencyStrategy.READ_WRITE, region = "notes.tags")
    private Set<String> tags = new HashSet<>();

    @Override
    public Long getId() {
        return id;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public void setName(String name) {
        this.name = name;
    }

    @Override
    public int getVersion() {
        return version;
    }

    @Override
    public Set<String> getTags() {
        return tags;
    }
}
