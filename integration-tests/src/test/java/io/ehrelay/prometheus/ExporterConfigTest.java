package io.ehrelay.prometheus;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

import io.ehrelay.metrics.ObjectNames;
import org.junit.jupiter.api.Test;

/**
 * The shipped exporter configuration against the metrics reference, without a JVM agent or Prometheus (those are
 * {@link PrometheusIT}'s): every metric {@code docs/metrics.md} lists is turned into a Prometheus metric by a rule of
 * {@code docs/prometheus/jmx-exporter.yml} — unless {@code docs/prometheus.md} says it is not exported — under a
 * name {@code docs/prometheus.md} lists; and every name listed there comes from a documented metric. The rules are
 * applied as the JMX exporter applies them: each pattern, wrapped in {@code ^.*(?:…).*$}, is matched against
 * {@code domain<key=value, …><>Attribute: value} (the keys in the ObjectName's order), the first rule that matches
 * wins, its name's {@code $n} are replaced, characters outside {@code [a-zA-Z0-9:_]} become {@code _}, repeated
 * underscores are folded, and the name is lowercased ({@code lowercaseOutputName: true}).
 */
class ExporterConfigTest {

    private static final Path DOCS = Path.of("..").toAbsolutePath().normalize().resolve("docs");
    private static final Pattern TICKED = Pattern.compile("`([^`]+)`");
    private static final List<String> PERCENTILES = Arrays.asList("50thPercentile", "75thPercentile",
            "95thPercentile", "98thPercentile", "99thPercentile", "999thPercentile");
    private static final List<String> RATES = Arrays.asList("MeanRate", "OneMinuteRate", "FiveMinuteRate",
            "FifteenMinuteRate");

    /** One rule of the exporter configuration. */
    private static final class Rule {
        final Pattern pattern;
        final String name;

        Rule(String pattern, String name) {
            this.pattern = Pattern.compile("^.*(?:" + pattern + ").*$");
            this.name = name;
        }
    }

    /** A documented metric: its name, Dropwizard type and scope, as {@code docs/metrics.md} gives them. */
    private static final class Documented {
        final String name;
        final String type;
        final String scope;

        Documented(String name, String type, String scope) {
            this.name = name;
            this.type = type;
            this.scope = scope;
        }

        /** The attributes the exporter should turn into metrics, and those it should leave out. */
        List<String> exported() {
            switch (type) {
                case "meter":
                case "counter":
                    return List.of("Count");
                case "gauge":
                    return List.of("Value");
                case "timer":
                case "histogram":
                    List<String> a = new ArrayList<>(PERCENTILES);
                    a.addAll(List.of("Mean", "Max", "Count"));
                    return a;
                default:
                    throw new AssertionError("docs/metrics.md: unknown type '" + type + "' of " + name);
            }
        }

        List<String> leftOut() {
            List<String> a = new ArrayList<>();
            if (type.equals("meter") || type.equals("timer")) {
                a.addAll(RATES);
            }
            if (type.equals("timer") || type.equals("histogram")) {
                a.addAll(List.of("Min", "StdDev"));
            }
            return a;
        }

        /** The MBeans of this metric: the CacheManager's, and a cache's when its scope has one. */
        List<String> beans() {
            List<String> b = new ArrayList<>();
            if (scope.equals("Peer")) {
                b.add(ObjectNames.peerMetric("node-a", "tcp", "10.0.0.6:40001", name));
                return b;
            }
            if (!scope.equals("Cache")) {
                b.add(ObjectNames.cacheManagerMetric("node-a", "tcp", name));
            }
            if (!scope.equals("CacheManager")) {
                b.add(ObjectNames.cacheMetric("node-a", "tcp", "users", name));
            }
            return b;
        }
    }

    @Test
    void everyDocumentedMetric_isExported_underANameThePrometheusPageLists_andNoOtherNameIsListed() throws Exception {
        List<Rule> rules = rules(DOCS.resolve("prometheus/jmx-exporter.yml"));
        List<Documented> metrics = documentedMetrics(DOCS.resolve("metrics.md"));
        String prometheusMd = Files.readString(DOCS.resolve("prometheus.md"), StandardCharsets.UTF_8);
        Set<String> notExported = notExported(prometheusMd);
        Set<String> listed = listedNames(prometheusMd);
        assertThat(rules).as("rules read from jmx-exporter.yml").hasSizeGreaterThan(10);
        assertThat(metrics).as("metrics read from metrics.md").hasSizeGreaterThan(40);
        assertThat(notExported).as("metrics.md's metrics that prometheus.md says are not exported")
                .containsExactly("learnedAllowedClasses");

        Set<String> dropped = new TreeSet<>();
        Set<String> unlisted = new TreeSet<>();
        Set<String> leaked = new TreeSet<>();
        Set<String> produced = new TreeSet<>();
        for (Documented m : metrics) {
            boolean excluded = notExported.contains(m.name);
            for (String bean : m.beans()) {
                for (String attribute : excluded ? m.exported() : m.leftOut()) {
                    String name = export(rules, bean, attribute);
                    if (name != null) {
                        leaked.add(m.name + " " + attribute + " -> " + name);
                    }
                }
                if (excluded) {
                    continue;
                }
                for (String attribute : m.exported()) {
                    String name = export(rules, bean, attribute);
                    if (name == null) {
                        dropped.add(m.name + " (" + m.type + ", " + attribute + ", " + bean + ")");
                        continue;
                    }
                    produced.add(name);
                    // timers and histograms: <name>_mean, _max, _count are described in one sentence, not listed
                    boolean distribution = m.type.equals("timer") || m.type.equals("histogram");
                    if (!listed.contains(name)
                            && !(distribution && listed.contains(name.replaceAll("_(mean|max|count)$", "")))) {
                        unlisted.add(m.name + " -> " + name);
                    }
                }
            }
        }
        assertThat(dropped).as("documented metrics that jmx-exporter.yml drops (add them to its rules)").isEmpty();
        assertThat(leaked).as("attributes exported although prometheus.md says they are not").isEmpty();
        assertThat(unlisted).as("exported names missing from prometheus.md's table").isEmpty();
        assertThat(listed).as("names prometheus.md lists that no documented metric produces").isSubsetOf(produced);
    }

    /** A made-up rule set shows that a rule left out is found: the check can fail. */
    @Test
    void aMetricNoRuleMatches_isFound() {
        List<Rule> rules = List.of(new Rule("io\\.ehrelay<type=CacheManager, [^>]*name=sent><>Count:",
                "ehrelay_sent_total"));
        assertThat(export(rules, ObjectNames.cacheManagerMetric("a", "tcp", "sent"), "Count"))
                .isEqualTo("ehrelay_sent_total");
        assertThat(export(rules, ObjectNames.cacheManagerMetric("a", "tcp", "overflowWaits"), "Count")).isNull();
    }

    /** The name the first matching rule gives the attribute, as the exporter computes it, or null. */
    static String export(List<Rule> rules, String objectName, String attribute) {
        ObjectName on = ObjectNames.of(objectName);
        // the exporter's "domain<key=value, ...><>Attribute: value", keys in the order the ObjectName was written
        String keys = on.getKeyPropertyListString().replace(",", ", ");
        String matched = on.getDomain() + "<" + keys + "><>" + attribute + ": 1.0";
        for (Rule r : rules) {
            Matcher m = r.pattern.matcher(matched);
            if (m.matches()) {
                return safeName(m.replaceAll(r.name)).toLowerCase(Locale.ROOT);
            }
        }
        return null;
    }

    /** As the exporter's safeName: invalid characters become '_', and repeated underscores one. */
    private static String safeName(String name) {
        StringBuilder out = new StringBuilder();
        char previous = 0;
        for (char c : name.toCharArray()) {
            char d = Character.isLetterOrDigit(c) && c < 128 || c == ':' ? c : '_';
            if (d == '_' && previous == '_') {
                continue;
            }
            out.append(d);
            previous = d;
        }
        return out.toString();
    }

    /** The rules' patterns and names: each {@code - pattern: '…'} and the {@code name:} that follows it. */
    private static List<Rule> rules(Path yml) throws IOException {
        List<Rule> rules = new ArrayList<>();
        String pattern = null;
        for (String line : Files.readAllLines(yml, StandardCharsets.UTF_8)) {
            String t = line.trim();
            if (t.startsWith("- pattern:")) {
                pattern = unquote(t.substring("- pattern:".length()).trim());
            } else if (t.startsWith("name:") && pattern != null) {
                rules.add(new Rule(pattern, unquote(t.substring("name:".length()).trim())));
                pattern = null;
            }
        }
        return rules;
    }

    private static String unquote(String yamlScalar) {
        if (yamlScalar.startsWith("'") && yamlScalar.endsWith("'")) {
            return yamlScalar.substring(1, yamlScalar.length() - 1).replace("''", "'");
        }
        if (yamlScalar.startsWith("\"") && yamlScalar.endsWith("\"")) {
            return yamlScalar.substring(1, yamlScalar.length() - 1);
        }
        return yamlScalar;
    }

    /** The rows of the metrics table: names (several per row), type, scope ("both" when it varies by name). */
    private static List<Documented> documentedMetrics(Path metricsMd) throws IOException {
        List<Documented> out = new ArrayList<>();
        boolean inTable = false;
        for (String line : Files.readAllLines(metricsMd, StandardCharsets.UTF_8)) {
            if (line.startsWith("| metric | type | scope |")) {
                inTable = true;
                continue;
            }
            if (!inTable || line.startsWith("|---")) {
                continue;
            }
            if (!line.startsWith("|")) {
                inTable = false;
                continue;
            }
            String[] cells = line.split("\\|");
            String type = cells[2].trim().replace(" (text)", "");
            String scope = cells[3].contains("both") ? "both" : cells[3].trim();
            Matcher names = TICKED.matcher(cells[1]);
            while (names.find()) {
                out.add(new Documented(names.group(1), type, scope));
            }
        }
        return out;
    }

    /** The metrics the "Not exported:" paragraph of prometheus.md names. */
    private static Set<String> notExported(String prometheusMd) throws IOException {
        int at = prometheusMd.indexOf("Not exported:");
        assertThat(at).as("prometheus.md's 'Not exported:' paragraph").isNotNegative();
        int end = prometheusMd.indexOf("\n\n", at);
        Set<String> documented = new TreeSet<>();
        for (Documented d : documentedMetrics(DOCS.resolve("metrics.md"))) {
            documented.add(d.name);
        }
        Set<String> out = new TreeSet<>();
        Matcher m = TICKED.matcher(prometheusMd.substring(at, end < 0 ? prometheusMd.length() : end));
        while (m.find()) {
            if (documented.contains(m.group(1))) {
                out.add(m.group(1));
            }
        }
        return out;
    }

    /** The {@code ehrelay_…} names in the first column of prometheus.md's metrics table. */
    private static Set<String> listedNames(String prometheusMd) {
        Set<String> out = new TreeSet<>();
        for (String line : prometheusMd.split("\n")) {
            if (!line.startsWith("| `ehrelay_")) {
                continue;
            }
            Matcher m = TICKED.matcher(line.split("\\|")[1]);
            while (m.find()) {
                out.add(m.group(1));
            }
        }
        return out;
    }
}
