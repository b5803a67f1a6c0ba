package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;

import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/** The report a person reads: every experiment charted, failures shown with their reason, ratios per baseline. */
class ReportTest {

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

    /**
     * E1: tcp fastest (5.0× stock-rmi at 1,280 B, 2.0× stock-jgroups at 10,240 B, half of raw); hessian faster at
     * its one ok step but failed the other. E2: rmi fastest. E3: stock-jgroups lowest but it does not wait for
     * its peer; rmi lowest of those that wait, 2.48× below stock-rmi's p99.
     */
    private final List<StepResult> quick = List.of(
            transfer("E1", "tcp", 10_000, 1280, 0.1),
            transfer("E1", "rmi", 10_000, 1280, 0.2),
            transfer("E1", "hessian", 10_000, 1280, 0.05),
            transfer("E1", "stock-rmi", 10_000, 1280, 0.5),
            transfer("E1", "stock-jgroups", 10_000, 1280, 1.0),
            transfer("E1", "raw", 10_000, 1280, 0.05),
            transfer("E1", "tcp", 10_000, 10_240, 0.4),
            transfer("E1", "rmi", 10_000, 10_240, 0.5),
            StepResult.failed("E1", "hessian", 10_000, 10_240, "peer vanished"),
            transfer("E1", "stock-rmi", 10_000, 10_240, 1.0),
            transfer("E1", "stock-jgroups", 10_000, 10_240, 0.8),
            transfer("E1", "raw", 10_000, 10_240, 0.2),
            transfer("E2", "tcp", 10_000, 1280, 0.2),
            transfer("E2", "rmi", 10_000, 1280, 0.1),
            transfer("E2", "stock-rmi", 10_000, 1280, 0.5),
            transfer("E2", "stock-jgroups-udp", 10_000, 1280, 1.0),
            transfer("E2", "raw", 10_000, 1280, 0.02),
            transfer("E2", "tcp", 40_000, 1280, 0.6),
            transfer("E2", "rmi", 40_000, 1280, 0.4),
            transfer("E2", "stock-rmi", 40_000, 1280, 2.0),
            transfer("E2", "stock-jgroups-udp", 40_000, 1280, 1.0),
            transfer("E2", "raw", 40_000, 1280, 0.08),
            transfer("E2", "tcp", 160_000, 1280, 2.0),
            transfer("E2", "rmi", 160_000, 1280, 1.6),
            transfer("E2", "stock-rmi", 160_000, 1280, 8.0),
            transfer("E2", "stock-jgroups-udp", 160_000, 1280, 4.0),
            transfer("E2", "raw", 160_000, 1280, 0.3),
            transfer("E2", "tcp", 320_000, 1280, 4.0),
            transfer("E2", "rmi", 320_000, 1280, 3.2),
            transfer("E2", "stock-rmi", 320_000, 1280, 16.0),
            transfer("E2", "stock-jgroups-udp", 320_000, 1280, 8.0),
            transfer("E2", "raw", 320_000, 1280, 0.6),
            latency("tcp", 0, 90, 150), latency("tcp", 1024, 95, 160), latency("tcp", 4096, 100, 170),
            latency("rmi", 0, 80, 120), latency("rmi", 1024, 80, 125), latency("rmi", 4096, 80, 130),
            latency("stock-rmi", 0, 150, 300), latency("stock-rmi", 1024, 160, 310), latency("stock-rmi", 4096, 170, 320),
            latency("stock-jgroups", 0, 8, 30), latency("stock-jgroups", 1024, 8, 31),
            latency("stock-jgroups", 4096, 8, 32));

    private static StepResult transfer(String exp, String transport, int count, int size, double seconds) {
        return new StepResult(exp, transport, count, size, seconds, seconds, 0, 0, Double.NaN, Double.NaN, Double.NaN,
                "ok", seconds);
    }

    @Test
    void html_chartsEveryExperimentAndShowsFailuresWithReasons() {
        Replay run = new Replay();
        run.elapsed = Duration.ofSeconds(125);
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
        List<ReportCharts.Chart> charts = ReportCharts.charts(results, List.of());

        assertThat(charts).extracting(ReportCharts.Chart::slug).containsExactly("e1", "e4-n-n-4");
        for (ReportCharts.Chart c : charts) {
            String svg = c.standalone();
            Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                    .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
            assertThat(doc.getDocumentElement().getTagName()).isEqualTo("svg");
            assertThat(doc.getDocumentElement().getTextContent()).contains(c.title());
        }
        assertThat(charts.get(0).standalone()).contains(">tcp<", ">stock-rmi<", ">rmi-sync<")
                .doesNotContain(">hessian<"); // a failed step is listed below the chart, not drawn
        assertThat(charts.get(0).failures()).contains("hessian E1 10,000 x 1,280 B: FAIL(peer vanished)");
    }

    @Test
    void ratios_compareSyncWithSyncAndAsyncWithAsync() {
        String ratios = ReportVerdicts.ratios(results);

        assertThat(ratios).contains("E1 10,000 x 1,280 B: tcp 128.0 MB/s, stock-rmi 25.6 MB/s -> 5.0x");
        assertThat(ratios).contains("rmi-sync 12.8 MB/s, stock-rmi-sync 3.2 MB/s -> 4.0x");
        assertThat(ratios).doesNotContain("rmi-sync 12.8 MB/s, stock-rmi 25.6");
        assertThat(ratios).doesNotContain("tcp 128.0 MB/s, stock-rmi-sync");
        assertThat(ratios).contains("E4 n-n/4 30,000 x 1,024 B: tcp 30.7 MB/s, stock-rmi 15.4 MB/s -> 2.0x");
        assertThat(ratios).doesNotContain("102,400 B: tcp"); // that baseline step failed: no ratio
    }

    // ------------------------------------------------------------------ a quick set a person decides from

    private static StepResult latency(String transport, int payload, double p50, double p99) {
        return new StepResult("E3", transport, 2000, payload, Double.NaN, Double.NaN, 0, 0, p50, p99, 3 * p99, "ok");
    }

    private static Replay run() {
        Replay run = new Replay();
        run.elapsed = Duration.ofSeconds(125);
        return run;
    }

    private static Document xml(String text) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static ReportCharts.Chart chart(List<ReportCharts.Chart> charts, String slug) {
        return charts.stream().filter(c -> c.slug().equals(slug)).findFirst().orElseThrow();
    }

    private static List<Element> elements(Document doc, String tag, String cssClass) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = doc.getElementsByTagName(tag);
        for (int i = 0; i < nodes.getLength(); i++) {
            Element e = (Element) nodes.item(i);
            if (cssClass == null || cssClass.equals(e.getAttribute("class"))) {
                out.add(e);
            }
        }
        return out;
    }

    private static Element first(Element parent, String tag) {
        return (Element) parent.getElementsByTagName(tag).item(0);
    }

    private static int count(String text, String part) {
        return text.split(Pattern.quote(part), -1).length - 1;
    }

    @Test
    void verdict_namesTheFastestPerExperiment_withItsRatioToTheBestStockAndToRaw() {
        List<ReportVerdicts.Verdict> verdicts = ReportVerdicts.verdicts(quick);

        assertThat(verdicts).extracting(v -> v.experiment).containsExactly("E1", "E2", "E3");
        ReportVerdicts.Verdict e1 = verdicts.get(0);
        assertThat(e1.winner).isEqualTo("tcp"); // hessian was faster at its one ok step, but failed the other
        assertThat(e1.vsStock).isCloseTo(Math.sqrt(5.0 * 2.0), within(1e-9)); // best stock differs by step
        assertThat(e1.vsRaw).isCloseTo(0.5, within(1e-9));
        assertThat(e1.text).contains("E1", "higher is better", "tcp fastest", "3.2× the best stock series",
                "2.0×–5.0× by step", "best stock: stock-rmi, stock-jgroups", "50% of raw",
                "not ranked: hessian failed 1 of 2");
        ReportVerdicts.Verdict e2 = verdicts.get(1);
        assertThat(e2.winner).isEqualTo("rmi");
        assertThat(e2.vsStock).isCloseTo(Math.pow(5.0 * 2.5 * 2.5 * 2.5, 0.25), within(1e-9));
        assertThat(e2.vsRaw).isCloseTo(Math.pow(0.2 * 0.2 * 0.1875 * 0.1875, 0.25), within(1e-9));
        assertThat(e2.text).contains("rmi fastest", "3.0× the best stock series", "best stock: stock-rmi, "
                + "stock-jgroups-udp");
        ReportVerdicts.Verdict e3 = verdicts.get(2);
        assertThat(e3.winner).isEqualTo("rmi"); // stock-jgroups is lower, but its "synchronous" put waits for nobody
        assertThat(e3.vsStock).isCloseTo(310.0 / 125.0, within(1e-9));
        assertThat(e3.text).contains("lower is better", "rmi lowest, p99 125 µs, p50 80 µs",
                "2.5× lower than the best stock that waits (stock-rmi", "not ranked", "does not wait for peers: "
                + "stock-jgroups").doesNotContain("stock-jgroups lowest");
    }

    @Test
    void verdict_comesFirst_inMarkdownAndHtml() {
        List<ReportVerdicts.Verdict> verdicts = ReportVerdicts.verdicts(quick);
        String md = Report.markdown(quick, run());
        String html = Report.html(quick, List.of(), run());

        int mdVerdict = md.indexOf("## Verdict");
        assertThat(mdVerdict).isPositive().isLessThan(md.indexOf("## E1")).isLessThan(md.indexOf("| "));
        int htmlVerdict = html.indexOf(">Verdict</h2>");
        assertThat(htmlVerdict).isPositive().isLessThan(html.indexOf("<svg")).isLessThan(html.indexOf("<table"));
        for (ReportVerdicts.Verdict v : verdicts) {
            assertThat(md.indexOf("- " + v.text)).as(v.text).isGreaterThan(mdVerdict).isLessThan(md.indexOf("## E1"));
            assertThat(html.indexOf("<li>" + Report.escape(v.text) + "</li>")).as(v.text).isGreaterThan(htmlVerdict)
                    .isLessThan(html.indexOf("<svg"));
        }
    }

    @Test
    void html_hasRealTables_noMarkdownInPre_andEveryTableSaysWhichWayIsBetter() throws Exception {
        String html = Report.html(quick, List.of(new ThreadsProbe.Row("tcp", 10, 14, "7", "1", true, null)), run());

        assertThat(html).doesNotContain("<pre", "|---", "| tcp |", "```");
        int tables = count(html, "<table>");
        assertThat(tables).isGreaterThanOrEqualTo(8);
        assertThat(count(html, "</table>")).isEqualTo(tables);
        Matcher m = Pattern.compile("<table>.*?</table>").matcher(html);
        int parsed = 0;
        while (m.find()) {
            Document table = xml(m.group());
            String caption = table.getElementsByTagName("caption").item(0).getTextContent();
            assertThat(caption).as("caption").containsAnyOf("lower is better", "higher is better");
            int columns = table.getElementsByTagName("th").getLength();
            NodeList rows = table.getElementsByTagName("tbody").item(0).getChildNodes();
            assertThat(rows.getLength()).as(caption).isPositive();
            for (int i = 0; i < rows.getLength(); i++) {
                assertThat(((Element) rows.item(i)).getElementsByTagName("td").getLength()).as(caption)
                        .isEqualTo(columns);
            }
            parsed++;
        }
        assertThat(parsed).isEqualTo(tables);
        assertThat(html).contains("<th>tcp</th>", "<td>128.0</td>", "<td class=\"fail\">FAIL</td>",
                "<td>5.0×</td>", "<td>50%</td>", "<td>80 / 125</td>");
    }

    @Test
    void charts_drawEhrelaySolid_stockDashed_rawDottedGrey_inDistinctColours_withMatchingLegend() throws Exception {
        Document svg = xml(chart(ReportCharts.charts(quick, List.of()), "e1").standalone());

        Map<String, Element> paths = new LinkedHashMap<>();
        Map<String, String> kinds = new HashMap<>();
        for (Element g : elements(svg, "g", "series")) {
            paths.put(g.getAttribute("data-series"), first(g, "path"));
            kinds.put(g.getAttribute("data-series"), g.getAttribute("data-kind"));
        }
        assertThat(paths.keySet()).containsExactlyInAnyOrder("tcp", "rmi", "hessian", "stock-rmi", "stock-jgroups",
                "raw");
        for (String ehrelay : List.of("tcp", "rmi", "hessian")) {
            assertThat(kinds.get(ehrelay)).isEqualTo("ehrelay");
            assertThat(paths.get(ehrelay).getAttribute("stroke-dasharray")).as(ehrelay).isEmpty();
        }
        for (String stock : List.of("stock-rmi", "stock-jgroups")) {
            assertThat(kinds.get(stock)).isEqualTo("stock");
            assertThat(paths.get(stock).getAttribute("stroke-dasharray")).as(stock).matches("\\d+,\\d+");
        }
        Element raw = paths.get("raw");
        assertThat(raw.getAttribute("stroke")).isEqualTo(Report.RAW_COLOR);
        assertThat(raw.getAttribute("stroke-dasharray")).matches("[12],\\d+"); // dots
        assertThat(paths.values().stream().map(p -> p.getAttribute("stroke")).distinct().count())
                .as("one colour per series").isEqualTo(paths.size());

        List<Element> legend = elements(svg, "g", "legend");
        assertThat(legend).extracting(g -> first(g, "text").getTextContent())
                .containsExactly("tcp", "rmi", "hessian", "stock-rmi", "stock-jgroups", "raw"); // ehrelay first
        double width = Double.parseDouble(svg.getDocumentElement().getAttribute("width"));
        double lastY = -100;
        for (Element g : legend) {
            Element line = first(g, "line");
            Element path = paths.get(g.getAttribute("data-series"));
            assertThat(line.getAttribute("stroke")).isEqualTo(path.getAttribute("stroke"));
            assertThat(line.getAttribute("stroke-dasharray")).isEqualTo(path.getAttribute("stroke-dasharray"));
            Element text = first(g, "text");
            double y = Double.parseDouble(text.getAttribute("y"));
            assertThat(y - lastY).as("legend rows apart").isGreaterThanOrEqualTo(16);
            lastY = y;
            assertThat(Double.parseDouble(text.getAttribute("x")) + 7 * text.getTextContent().length())
                    .as("legend fits").isLessThanOrEqualTo(width);
        }
    }

    @Test
    void everyChart_saysWhichWayIsBetter() {
        List<ThreadsProbe.Row> threads = List.of(new ThreadsProbe.Row("tcp", 10, 14, "7", "1", true, null),
                new ThreadsProbe.Row("tcp", 1000, 14, "7", "1", true, null));
        List<StepResult> all = new ArrayList<>(quick);
        all.addAll(results); // with E4
        Map<String, String> direction = new LinkedHashMap<>();
        for (ReportCharts.Chart c : ReportCharts.charts(all, threads)) {
            direction.put(c.slug(), c.svg().contains("lower is better") ? "lower"
                    : c.svg().contains("higher is better") ? "higher" : "none");
        }
        assertThat(direction).containsExactly(Map.entry("e1", "lower"), Map.entry("e2", "lower"),
                Map.entry("e3", "lower"), Map.entry("e4-n-n-4", "higher"), Map.entry("threads", "lower"));
    }

    @Test
    void axes_fitTheData_andE3PlacesPayloadZeroAsACategory() throws Exception {
        List<ReportCharts.Chart> charts = ReportCharts.charts(quick, List.of());

        Document e2 = xml(chart(charts, "e2").standalone());
        assertThat(elements(e2, "text", "xtick")).extracting(Element::getTextContent)
                .containsExactly("10k", "40k", "160k", "320k"); // not to 1M
        for (Element t : elements(e2, "text", "ytick")) {
            assertThat(Double.parseDouble(t.getAttribute("data-value"))).isBetween(0.02 / 1.5, 16.0 * 1.5);
        }
        assertThat(elements(e2, "text", "ytick")).hasSizeGreaterThanOrEqualTo(3);
        Document e1 = xml(chart(charts, "e1").standalone());
        assertThat(elements(e1, "text", "xtick")).extracting(Element::getTextContent)
                .containsExactly("1.25 KiB", "10 KiB");

        Document e3 = xml(chart(charts, "e3").standalone());
        List<Element> ticks = elements(e3, "text", "xtick");
        assertThat(ticks).extracting(Element::getTextContent).containsExactly("0 B", "1 KiB", "4 KiB");
        assertThat(elements(e3, "text", "xlabel").get(0).getTextContent()).doesNotContain("log");
        double[] x = ticks.stream().mapToDouble(t -> Double.parseDouble(t.getAttribute("x"))).toArray();
        assertThat(x[1] - x[0]).isCloseTo(x[2] - x[1], within(0.2)); // evenly spaced categories
        for (Element g : elements(e3, "g", "series")) {
            NodeList marks = g.getElementsByTagName(g.getAttribute("data-kind").equals("stock") ? "rect" : "circle");
            assertThat(marks.getLength()).isEqualTo(3);
            double first = Double.parseDouble(((Element) marks.item(0)).getAttribute(
                    marks.item(0).getNodeName().equals("rect") ? "x" : "cx"));
            double offset = marks.item(0).getNodeName().equals("rect") ? 3.5 : 0;
            assertThat(first + offset).as("payload 0 of " + g.getAttribute("data-series")).isCloseTo(x[0],
                    within(0.2));
        }
    }

    @Test
    void e3_marksTransportsWhoseSynchronousModeDoesNotWait_inLegendAndTables() throws Exception {
        Document e3 = xml(chart(ReportCharts.charts(quick, List.of()), "e3").standalone());
        assertThat(elements(e3, "g", "legend")).extracting(g -> first(g, "text").getTextContent())
                .containsExactly("tcp", "rmi", "stock-rmi", "stock-jgroups (does not wait for peers)");

        String md = Report.markdown(quick, run());
        String e3Table = md.substring(md.indexOf("E3: synchronous put latency, p50 / p99"));
        assertThat(e3Table.substring(0, e3Table.indexOf("\n|---"))).contains("| tcp | rmi | stock-rmi | "
                + "stock-jgroups (does not wait for peers) |");
        assertThat(md).contains("| stock-jgroups (does not wait for peers) | 1,024 | 2,000 | 8.0 | 31.0 |")
                .contains("| rmi | 1,024 | 2,000 | 80.0 | 125.0 |");
        assertThat(Report.html(quick, List.of(), run())).contains("<th>stock-jgroups (does not wait for peers)</th>");
        assertThat(ReportConsole.tableRow(latency("stock-jgroups", 0, 8, 30))).contains("(does not wait for peers)");
        assertThat(ReportConsole.tableRow(latency("tcp", 0, 8, 30))).doesNotContain("does not wait");
    }

    @Test
    void console_endsWithAShortSummary_notTheRatioLines() {
        List<StepResult> all = new ArrayList<>(quick);
        List<String> lines = ReportConsole.consoleSummary(all, Duration.ofSeconds(125), Path.of("results/replay-x.html"),
                Path.of("results/replay-x.md"), Path.of("results/replay-x.csv"), 3, Path.of("results/replay-x.log"));

        List<ReportVerdicts.Verdict> verdicts = ReportVerdicts.verdicts(all);
        assertThat(lines).hasSizeLessThanOrEqualTo(verdicts.size() + 4);
        for (ReportVerdicts.Verdict v : verdicts) {
            assertThat(lines).contains("  " + v.text);
        }
        assertThat(lines).contains("1 step(s) FAILED; reasons in the report", "run took 2 min 05 s");
        assertThat(lines.get(lines.size() - 1)).startsWith("report: results/replay-x.html").contains("replay-x.md",
                "replay-x.csv", "3 .svg");
        assertThat(String.join("\n", lines)).doesNotContain("->", "MB/s, stock-rmi");
        assertThat(ReportVerdicts.ratios(all).split("\n").length).isGreaterThan(lines.size()); // those stay in the report
    }

    @Test
    void consoleColumns_fitLongSeriesNames() {
        List<String> names = List.of("tcp", "stock-jgroups-udp", "stock-rmi-sync");
        int tw = ReportConsole.width("transport".length(), names);
        int ew = ReportConsole.width(3, List.of("E1", "E4 n-n/16"));
        String header = ReportConsole.tableHeader(ew, tw);
        int countEnd = header.indexOf("count") + "count".length();
        for (String t : names) {
            String row = ReportConsole.tableRow(transfer("E1", t, 10_000, 1280, 0.1), ew, tw);
            assertThat(row.indexOf(t + " ")).as(t).isEqualTo(ew + 1);
            assertThat(row.indexOf("10,000") + "10,000".length()).as(t).isEqualTo(countEnd);
            assertThat(row.lastIndexOf("  ok")).as(t).isEqualTo(header.indexOf("  result"));
        }
    }

    @Test
    void progress_withoutATerminal_printsPlainStepLinesWithTimeLeft() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        long[] now = {0};
        Progress p = new Progress(new PrintStream(bytes, true, StandardCharsets.UTF_8), false, 3, 3,
                () -> now[0]);
        p.begin("E1 tcp 10,000 x 1,280 B", 1);
        p.update("5,000 of 10,000 arrived");
        now[0] = 10_000_000_000L;
        p.println("row 1");
        p.end();
        p.begin("E1 stock-jgroups-udp 10,000 x 1,280 B", 1);
        p.println("row 2");
        p.end();
        String out = bytes.toString(StandardCharsets.UTF_8);

        assertThat(out).doesNotContain("\r").doesNotContain("arrived");
        assertThat(out.split("\n")).containsExactly(
                "step 1 of 3 (0 min 00 s elapsed, time left not yet known): E1 tcp 10,000 x 1,280 B", "row 1",
                "step 2 of 3 (0 min 10 s elapsed, about 0 min 20 s left): E1 stock-jgroups-udp 10,000 x 1,280 B",
                "row 2");
    }

    @Test
    void progress_onATerminal_rewritesOneLine() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Progress p = new Progress(new PrintStream(bytes, true, StandardCharsets.UTF_8), true, 2, 2,
                () -> 0L);
        p.begin("E1 tcp 10,000 x 1,280 B", 1);
        p.update("5,000 of 10,000 arrived");
        p.println("row 1");
        p.end();
        p.clear();
        String out = bytes.toString(StandardCharsets.UTF_8);

        assertThat(out).contains("\rstep 1 of 2", "5,000 of 10,000 arrived");
        assertThat(count(out, "\n")).as("the row is the only line; progress is redrawn in place").isEqualTo(1);
        assertThat(out.substring(out.lastIndexOf('\r') + 1)).as("progress cleared at the end").isEmpty();
    }

    @Test
    void csvRows_readBack() {
        StepResult r = transfer("E2", "stock-jgroups-udp", 40_000, 1280, 1.2345);
        r.writerCpuSeconds = 1.5;
        r.readerCpuSeconds = 2.25;
        r.writerAllocBytes = 100L << 20;
        r.readerAllocBytes = 200L << 20;
        r.profile = "default";
        r.putCpuSeconds = 0.4321;
        StepResult back = StepResult.parseCsv(r.csv());
        assertThat(back.csv()).isEqualTo(r.csv());
        assertThat(back.profile).isEqualTo("default");
        assertThat(back.putCpuSeconds).isEqualTo(0.4321);
        // a CSV written before the put loop's CPU time was measured still reads, without it
        String older = r.csv().substring(0, r.csv().lastIndexOf(','));
        assertThat(StepResult.parseCsv(older).putCpuSeconds).isNaN();
        assertThat(StepResult.parseCsv(older).profile).isEqualTo("default");
        assertThat(back.cpuSecondsPerGigabyte()).isCloseTo(3.75 / (40_000 * 1280 / 1e9),
                Offset.offset(1e-9));
        assertThat(back.allocPerByte(back.readerAllocBytes)).isCloseTo((200L << 20) / (40_000 * 1280.0),
                Offset.offset(1e-9));
        StepResult failed = StepResult.failed("E1", "hessian", 10_000, 1280, "peer vanished, twice");
        assertThat(StepResult.parseCsv(failed.csv()).ok()).isFalse();
    }
}
