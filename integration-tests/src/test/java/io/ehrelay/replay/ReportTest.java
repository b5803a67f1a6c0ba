package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** The report a person reads: every experiment charted, failures shown with their reason, ratios per baseline. */
class ReportTest {

    private static StepResult transfer(String exp, String transport, int count, int size, double seconds) {
        return new StepResult(exp, transport, count, size, seconds, seconds, 0, 0, Double.NaN, Double.NaN, Double.NaN,
                "ok", seconds);
    }

    private final List<StepResult> results = List.of(
            transfer("E1", "tcp", 10_000, 1280, 0.1),
            transfer("E1", "stock-rmi", 10_000, 1280, 0.5),
            transfer("E1", "rmi-sync", 10_000, 1280, 1.0),
            transfer("E1", "stock-rmi-sync", 10_000, 1280, 4.0),
            StepResult.failed("E1", "hessian", 10_000, 1280, "peer vanished"),
            transfer("E4 n-n/4", "tcp", 30_000, 1024, 1.0),
            transfer("E4 n-n/4", "tcp", 3_000, 102_400, 2.0),
            transfer("E4 n-n/4", "stock-rmi", 30_000, 1024, 2.0),
            StepResult.failed("E4 n-n/4", "stock-rmi", 3_000, 102_400, "no DONE within 600 s"));

    @Test
    void html_chartsEveryExperimentAndShowsFailuresWithReasons() {
        Replay run = new Replay();
        run.elapsed = java.time.Duration.ofSeconds(125);
        List<ThreadsProbe.Row> threads = List.of(
                new ThreadsProbe.Row("tcp", 10, 14, "7", "1", true, null),
                new ThreadsProbe.Row("tcp", 1000, 14, "7", "1", true, null),
                new ThreadsProbe.Row("stock-rmi", 10, 24, "-", "-", true, null),
                new ThreadsProbe.Row("stock-rmi", 1000, 1904, "-", "-", true, null),
                new ThreadsProbe.Row("stock-jgroups", 0, 0, "-", "-", false, "needs JGroups 3"));

        String html = Report.html(results, threads, run);

        assertThat(html).contains("<h2>E1: 10,000 elements", "<h2>E4 n-n/4 (mode/members)", "<h2>Threads: JVM threads");
        assertThat(html.split("<svg ", -1)).hasSize(4); // E1, E4 n-n/4, threads: charts only where data exist
        assertThat(html).contains("hessian E1 10,000 x 1,280 B: FAIL(peer vanished)",
                "stock-rmi E4 n-n/4 3,000 x 102,400 B: FAIL(no DONE within 600 s)",
                "stock-jgroups: not probed: needs JGroups 3", "run took 2 min 05 s");
    }

    @Test
    void charts_areStandaloneSvgFilesNamedByExperiment() throws Exception {
        List<Report.Chart> charts = Report.charts(results, List.of());

        assertThat(charts).extracting(Report.Chart::slug).containsExactly("e1", "e4-n-n-4");
        for (Report.Chart c : charts) {
            String svg = c.standalone();
            org.w3c.dom.Document doc = javax.xml.parsers.DocumentBuilderFactory.newInstance().newDocumentBuilder()
                    .parse(new java.io.ByteArrayInputStream(svg.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            assertThat(doc.getDocumentElement().getTagName()).isEqualTo("svg");
            assertThat(doc.getDocumentElement().getTextContent()).contains(c.title());
        }
        assertThat(charts.get(0).standalone()).contains(">tcp<", ">stock-rmi<", ">rmi-sync<")
                .doesNotContain(">hessian<"); // a failed step is listed below the chart, not drawn
        assertThat(charts.get(0).failures()).contains("hessian E1 10,000 x 1,280 B: FAIL(peer vanished)");
    }

    @Test
    void ratios_compareSyncWithSyncAndAsyncWithAsync() {
        String ratios = Report.ratios(results);

        assertThat(ratios).contains("E1 10,000 x 1,280 B: tcp 128.0 MB/s, stock-rmi 25.6 MB/s -> 5.0x");
        assertThat(ratios).contains("rmi-sync 12.8 MB/s, stock-rmi-sync 3.2 MB/s -> 4.0x");
        assertThat(ratios).doesNotContain("rmi-sync 12.8 MB/s, stock-rmi 25.6");
        assertThat(ratios).doesNotContain("tcp 128.0 MB/s, stock-rmi-sync");
        assertThat(ratios).contains("E4 n-n/4 30,000 x 1,024 B: tcp 30.7 MB/s, stock-rmi 15.4 MB/s -> 2.0x");
        assertThat(ratios).doesNotContain("102,400 B: tcp"); // that baseline step failed: no ratio
    }
}
