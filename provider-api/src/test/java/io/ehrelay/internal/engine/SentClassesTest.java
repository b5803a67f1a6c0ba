package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.contract.AllowedValue;
import io.ehrelay.internal.codec.AllowList;
import io.ehrelay.internal.codec.EventCodec;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Test;

class SentClassesTest {

    @Test
    void learnsTheClassesSentBeyondTheJdkDefaults_asOneSetting_withPresetsInPlaceOfTheirClasses() throws Exception {
        SentClasses sent = new SentClasses(AllowList.withDefaults(List.of()), true);
        assertThat(sent.learnedSetting()).as("nothing sent yet").isEmpty();
        EventCodec.encodePut("c", new Element("k", new ArrayList<>(List.of(1L, "s"))), sent.forCache("c"));
        assertThat(sent.learnedSetting()).as("JDK value types need nothing").isEmpty();
        EventCodec.encodePut("c", new Element("k", new AllowedValue[] {new AllowedValue("a", 1)}), sent.forCache("c"));
        EventCodec.encodePut("d", new Element(new FakeSimpleKey(), "v"), sent.forCache("d"));
        assertThat(sent.learnedSetting())
                .isEqualTo("allowedClasses=io.ehrelay.contract.AllowedValue|" + FakeSimpleKey.class.getName());
    }

    @Test
    void withoutLearning_recordsNothing() throws Exception {
        SentClasses sent = new SentClasses(AllowList.withDefaults(List.of()), false);
        EventCodec.encodePut("c", new Element("k", new AllowedValue("a", 1)), sent.forCache("c"));
        assertThat(sent.learning()).isFalse();
        assertThat(sent.learnedSetting()).isEmpty();
    }

    /** Not Spring's: a preset admits only the exact framework class, never a look-alike. */
    static final class FakeSimpleKey implements Serializable {
        private static final long serialVersionUID = 1L;
    }
}
