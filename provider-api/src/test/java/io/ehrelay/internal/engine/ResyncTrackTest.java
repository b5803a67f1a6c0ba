package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.ehrelay.spi.Op;
import io.ehrelay.spi.ReplicationEvent;
import net.sf.ehcache.Ehcache;
import net.sf.ehcache.Element;

class ResyncTrackTest {

    private final EngineTestKit kit = new EngineTestKit();
    private final Ehcache cache = kit.cacheManager.getEhcache("a");
    private final ResyncTrack track = new ResyncTrack();
    private static final long SNAPSHOT_STREAM = 77;

    @AfterEach
    void close() {
        kit.close();
    }

    private static ReplicationEvent live(Op op, Object key) {
        return op == Op.PUT ? ReplicationEvent.put("a", new Element(key, "live"))
                : op == Op.REMOVE_ALL ? ReplicationEvent.removeAll("a") : ReplicationEvent.ofKey(op, "a", key);
    }

    @Test
    void untouchedKeys_takeTheSnapshotsValue() {
        cache.put(new Element("k", "mine"));
        track.offer(cache, new Element("k", "theirs"), SNAPSHOT_STREAM, 10);
        assertThat(cache.get("k").getObjectValue()).isEqualTo("theirs");
    }

    @Test
    void aLiveEventNewerThanTheSnapshot_keepsItsValue() {
        track.touch(live(Op.PUT, "k"), SNAPSHOT_STREAM, 11);
        cache.put(new Element("k", "live"));
        track.offer(cache, new Element("k", "theirs"), SNAPSHOT_STREAM, 10);
        assertThat(cache.get("k").getObjectValue()).isEqualTo("live");
    }

    @Test
    void aLiveEventTheSnapshotAlreadyHolds_doesNotProtectItsKey() {
        track.touch(live(Op.PUT, "k"), SNAPSHOT_STREAM, 9);
        track.offer(cache, new Element("k", "theirs"), SNAPSHOT_STREAM, 10);
        assertThat(cache.get("k").getObjectValue()).isEqualTo("theirs");
    }

    @Test
    void eventsOfAnotherStream_andLocalWrites_areAlwaysNewer() {
        track.touch(live(Op.PUT, "other-stream"), 12345, 1);
        track.touchLocal("local");
        track.offer(cache, new Element("other-stream", "theirs"), SNAPSHOT_STREAM, 10);
        track.offer(cache, new Element("local", "theirs"), SNAPSHOT_STREAM, 10);
        assertThat(cache.get("other-stream")).isNull();
        assertThat(cache.get("local")).isNull();
    }

    @Test
    void removeOthers_removesWhatThePeerDidNotHold_unlessSomethingNewerWroteIt() {
        cache.put(new Element("held", "x"));
        cache.put(new Element("stale", "x"));
        cache.put(new Element("written", "x"));
        track.offer(cache, new Element("held", "theirs"), SNAPSHOT_STREAM, 10);
        track.touchLocal("written");
        assertThat(track.removeOthers(cache)).isEqualTo(1);
        assertThat(cache.getKeys()).containsExactlyInAnyOrder("held", "written");
    }

    @Test
    void aNewerRemoveAll_protectsEverything() {
        cache.put(new Element("k", "x"));
        track.touch(live(Op.REMOVE_ALL, null), SNAPSHOT_STREAM, 11);
        track.offer(cache, new Element("j", "theirs"), SNAPSHOT_STREAM, 10);
        assertThat(track.removeOthers(cache)).isZero();
        assertThat(cache.get("j")).isNull();
    }

    @Test
    void aSnapshotElementThisNodeCannotDecode_removesItsKeyHere_unlessSomethingNewerWroteIt() {
        cache.put(new Element("old", "mine"));
        cache.put(new Element("fresh", "live"));
        track.touch(live(Op.PUT, "fresh"), SNAPSHOT_STREAM, 11);
        track.invalidate(cache, ReplicationEvent.ofKey(Op.INVALIDATE, "a", "old"));
        track.invalidate(cache, ReplicationEvent.ofKey(Op.INVALIDATE, "a", "fresh"));
        assertThat(cache.get("old")).as("the peer holds a value this node cannot take: its own is out of date")
                .isNull();
        assertThat(cache.get("fresh").getObjectValue()).isEqualTo("live");
    }

    @Test
    void aSnapshotElementWhoseKeyCannotBeDecoded_leavesTheKeyUnseen_soTheEndOfTheResyncRemovesIt() {
        cache.put(new Element("unknown-to-this-node", "mine"));
        track.invalidate(cache, ReplicationEvent.removeAll("a"));
        track.offer(cache, new Element("k", "theirs"), SNAPSHOT_STREAM, 10);
        assertThat(track.removeOthers(cache)).isEqualTo(1);
        assertThat(cache.get("unknown-to-this-node")).isNull();
        assertThat(cache.get("k").getObjectValue()).isEqualTo("theirs");
    }
}
