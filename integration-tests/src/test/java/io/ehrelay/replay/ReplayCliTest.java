package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The replay's command line: every value checked before anything runs, and an error names the option. */
class ReplayCliTest {

    private static Replay parsed(String... args) throws Replay.UsageException {
        Replay r = new Replay();
        assertThat(r.parse(args)).isTrue();
        return r;
    }

    private static void refused(String message, String... args) {
        assertThatThrownBy(() -> new Replay().parse(args)).isInstanceOf(Replay.UsageException.class)
                .hasMessageContaining(message);
    }

    @Test
    void helpIsUsage_inEverySpelling() throws Exception {
        for (String h : new String[] {"-h", "--help", "help"}) {
            assertThat(new Replay().parse(new String[] {h})).as(h).isFalse();
        }
    }

    @Test
    void goodOptions_areTaken() throws Exception {
        Replay r = parsed("--transports", "tcp,raw", "--experiments", "E1,e3", "--e1-sizes", "1280,40960", "--reps",
                "3", "--heap", "1g", "--discovery", "multicast");
        assertThat(r.transports).containsExactly("tcp", "raw");
        assertThat(r.experiments).containsExactly("e1", "e3");
        assertThat(r.e1Sizes).containsExactly(1280, 40960);
        assertThat(r.reps).isEqualTo(3);
        assertThat(r.heap).isEqualTo("1g");
    }

    @Test
    void badValues_areRefused_namingTheOption() {
        refused("--transports: unknown transport 'foo'", "--transports", "foo");
        refused("--transports needs a value", "--transports");
        refused("--transports needs a value", "--transports", "--reps", "2");
        refused("--e1-sizes: 'abc' is not a whole number", "--e1-sizes", "abc");
        refused("--e1-sizes: -5 is out of range", "--e1-sizes", "-5");
        refused("--e1-sizes: 0 is out of range", "--e1-sizes", "1280,0");
        refused("--e1-sizes: empty item", "--e1-sizes", "1280,,40960");
        refused("--experiments: unknown value 'e9'", "--experiments", "e9");
        refused("--reps: 0 is out of range", "--reps", "0");
        refused("--heap: 'lots' is not a heap size", "--heap", "lots");
        refused("--discovery: unknown value 'dns'", "--discovery", "dns");
        refused("--e4-modes: unknown value 'all'", "--e4-modes", "all");
        refused("unknown option '--fast'", "--fast");
    }
}
