package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
        assertThat(r.profiles).as("the default profile unless asked").containsExactly("default");
        assertThat(parsed("--profile", "default").profiles).containsExactly("default");
        assertThat(parsed("--profile", "tuned").profiles).containsExactly("tuned");
        assertThat(parsed("--profile", "both").profiles).containsExactly("default", "tuned");
    }

    @Test
    void theSets_defaultIsAVerdictInMinutes_quickAndFullAsBefore_andOptionsNarrowThemInAnyOrder() throws Exception {
        Replay verdict = parsed();
        assertThat(verdict.e1Sizes).containsExactly(10240, 40960);
        assertThat(verdict.e2Counts).containsExactly(40_000, 160_000);
        assertThat(verdict.e3Payloads).containsExactly(0, 4096, 16384);
        assertThat(verdict.e3Calls).isEqualTo(1000);
        assertThat(verdict.profiles).containsExactly("default");
        assertThat(verdict.experiments).containsExactly("e1", "e2", "e3");
        assertThat(verdict.transports).as("every transport, stock and raw beside them; no -sync variant, JGroups on "
                + "its TCP stack only").containsExactly("tcp", "rmi", "hessian", "jgroups", "stock-rmi", "stock-jgroups",
                "raw");
        assertThat(parsed("--quick").transports).isEqualTo(Profiles.ALL);
        assertThat(parsed("--transports", "stock-rmi-sync").transports).containsExactly("stock-rmi-sync");

        Replay quick = parsed("--quick");
        assertThat(quick.e1Sizes).containsExactly(1280, 10240, 40960, 81920);
        assertThat(quick.e2Counts).containsExactly(10_000, 40_000, 160_000, 320_000);
        assertThat(quick.e3Payloads).containsExactly(0, 1024, 2048, 4096, 8192, 16384);
        assertThat(quick.e3Calls).isEqualTo(2000);
        assertThat(quick.profiles).containsExactly("default", "tuned");
        assertThat(quick.heap).isEqualTo("2g");

        Replay full = parsed("--e1-sizes", "5120", "--full", "--profile", "tuned");
        assertThat(full.e1Sizes).as("given before --full: kept").containsExactly(5120);
        assertThat(full.e2Counts).hasSize(9);
        assertThat(full.profiles).containsExactly("tuned");
        assertThat(full.heap).isEqualTo("6g");
        assertThat(full.experiments).contains("e4", "threads");
        assertThat(parsed("--e3-payloads", "0,512").e3Payloads).containsExactly(0, 512);
        refused("--full and --quick: choose one set", "--full", "--quick");
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
        refused("--profile: 'fast' is not default, tuned or both", "--profile", "fast");
        refused("--discovery: unknown value 'dns'", "--discovery", "dns");
        refused("--e4-modes: unknown value 'all'", "--e4-modes", "all");
        refused("unknown option '--fast'", "--fast");
        refused("--render: no such file 'nowhere.csv'", "--render", "nowhere.csv");
    }

    @Test
    void render_writesTheReportOfARunsCsvAgain(@TempDir Path dir)
            throws Exception {
        Path csv = dir.resolve("run.csv");
        Files.write(csv, List.of(StepResult.CSV_HEADER,
                "E1,tcp,10000,40960,0.5000,0.4900,819.2,20000,400,400,NaN,NaN,NaN,ok,0.3000",
                "E1,stock-rmi,10000,40960,1.5000,0.6000,273.1,6667,400,400,NaN,NaN,NaN,ok,0.1000",
                "E1,raw,10000,40960,0.3000,0.2900,1365.3,33333,300,300,NaN,NaN,NaN,ok,0.0000"));
        Replay r = parsed("--render", csv.toString());
        r.renderAgain();
        String html = Files.readString(dir.resolve("run.html"));
        assertThat(html).contains("Re-rendered").contains("run.csv").contains("Verdict");
        assertThat(html.indexOf("Verdict")).isLessThan(html.indexOf("<table"));
        assertThat(Files.readString(dir.resolve("run.md"))).contains("tcp fastest").contains("3.0×");
        assertThat(dir.resolve("run-e1.svg")).exists();
    }

    @Test
    void render_ofARunWithBothProfiles_writesAReportPerProfile(@TempDir Path dir)
            throws Exception {
        Path csv = dir.resolve("run.csv");
        Files.write(csv, List.of(StepResult.CSV_HEADER,
                "E1,tcp,10000,40960,1.2000,1.1900,341.3,8333,450,450,NaN,NaN,NaN,ok,1.0000,1.100,1.200,400,420,default",
                "E1,stock-rmi,10000,40960,1.8000,1.1000,227.6,5556,520,450,NaN,NaN,NaN,ok,0.3000,1.300,1.800,390,440,"
                        + "default",
                "E1,tcp,10000,40960,0.5000,0.4900,819.2,20000,400,400,NaN,NaN,NaN,ok,0.3000,0.600,0.700,390,430,tuned",
                "E1,stock-rmi,10000,40960,1.5000,0.6000,273.1,6667,400,400,NaN,NaN,NaN,ok,0.1000,1.200,1.100,390,440,"
                        + "tuned"));
        parsed("--render", csv.toString()).renderAgain();
        String byDefault = Files.readString(dir.resolve("run-default.md"));
        String tuned = Files.readString(dir.resolve("run-tuned.md"));
        // ratios within each profile: 341.3 / 227.6 and 819.2 / 273.1
        assertThat(byDefault).contains("Profile **default**").contains("1.5×").doesNotContain("819");
        assertThat(tuned).contains("Profile **tuned**").contains("3.0×").doesNotContain("341");
        // the costs: (1.1 + 1.2) s per 0.4096 GB, 400 MiB allocated per 409.6 MB
        assertThat(byDefault).contains("| 5.6 |").contains("| 1.0 |");
    }
}
