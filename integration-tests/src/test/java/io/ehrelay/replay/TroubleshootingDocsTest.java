package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * {@code docs/troubleshooting.md} against the code, so that the page cannot go stale silently: every log line it
 * quotes still comes from the providers' main code. The lines are the backticked spans in its tables' first
 * column, and the message fragments quoted in the other columns (a span with a space, at least 20 characters, not
 * starting with a capital letter: the JDK's own messages, such as {@code Address already in use}, do). Parts in
 * {@code <…>} and {@code …} vary; the fixed text between them must be found in the string literals of
 * {@code provider-*}{@code /src/main/java} (literals joined with {@code +} read as one, SLF4J's {@code {}} read as a
 * value): inside one literal, or made of literals as the code puts them together with values (the end of one,
 * whole ones, the start of one).
 */
class TroubleshootingDocsTest {

    private static final Path ROOT = ReferenceDocsTest.ROOT;
    private static final Pattern SPAN = Pattern.compile("`([^`]+)`");
    private static final Pattern PLACEHOLDER = Pattern.compile("<[^<>]*>|…");
    private static final char SEP = '\u0000';

    @Test
    void everyLogLineTheTroubleshootingPageQuotes_isStillInTheCode() throws IOException {
        Literals literals = literals();
        List<String> quoted = quotedLines(Files.readString(ROOT.resolve("docs/troubleshooting.md"),
                StandardCharsets.UTF_8));
        assertThat(quoted).as("log lines quoted in docs/troubleshooting.md").hasSizeGreaterThan(25);
        List<String> stale = new ArrayList<>();
        for (String line : quoted) {
            String problem = check(line, literals);
            if (problem != null) {
                stale.add(line + "\n      " + problem);
            }
        }
        assertThat(stale).as("quoted lines the code no longer says (reword the page, or the code)").isEmpty();
    }

    /** The check fails on a line the code does not say, and on one with too little fixed text to check. */
    @Test
    void aLineTheCodeDoesNotSay_isFound() throws IOException {
        Literals literals = literals();
        assertThat(check("ehrelay: could not deliver <n> events to peer <peer> of CacheManager <name>: <cause>",
                literals)).isNull();
        assertThat(check("ehrelay: could not hand <n> events to peer <peer> of CacheManager <name>: <cause>",
                literals)).contains("'could not hand'");
        assertThat(check("ehrelay: <what>", literals)).contains("fixed text");
    }

    /** Why {@code line} is not in the code, or {@code null} when it is. */
    static String check(String line, Literals literals) {
        int checked = 0;
        for (String segment : PLACEHOLDER.split(line)) {
            String s = segment.trim();
            if (s.length() < 8) {
                continue; // punctuation and short words between values
            }
            checked += s.length();
            int reached = literals.cover(s, 0, new HashMap<>());
            if (reached < s.length()) {
                return "no string literal of the providers' main code says '" + s.substring(reached) + "'";
            }
        }
        return checked >= 15 ? null : "too little fixed text to check (15 characters or more, in parts of 8 or more)";
    }

    /**
     * The providers' string literals, for a fixed part of a quoted line: it is inside one literal, or it is made of
     * literals as the code concatenates them with values — the end of one literal, whole literals, the start of
     * one (blanks at a literal's edge aside).
     */
    static final class Literals {
        private final String text;
        private final Set<String> whole;
        private final TreeSet<String> byStart;
        private final TreeSet<String> byEnd;

        Literals(List<String> all) {
            StringBuilder b = new StringBuilder();
            for (String l : all) {
                b.append(SEP).append(l);
            }
            text = b.append(SEP).toString();
            whole = new HashSet<>(all);
            byStart = new TreeSet<>(all);
            byEnd = new TreeSet<>();
            for (String l : all) {
                byEnd.add(reversed(l));
            }
        }

        /**
         * How far {@code s} can be covered from {@code from}; {@code s.length()} when all of it. {@code memo} keeps
         * what each position reaches.
         */
        int cover(String s, int from, Map<Integer, Integer> memo) {
            Integer known = memo.get(from);
            if (known != null) {
                return known;
            }
            memo.put(from, from);
            String rest = s.substring(from);
            if (from == 0 ? text.contains(rest) : startsALiteral(rest)) {
                memo.put(from, s.length());
                return s.length();
            }
            int best = from;
            for (int end = s.length() - 1; end > from; end--) {
                String piece = s.substring(from, end);
                if (from == 0 ? endsALiteral(piece) : isALiteral(piece)) {
                    int reached = cover(s, end, memo);
                    if (reached == s.length()) {
                        memo.put(from, reached);
                        return reached;
                    }
                    best = Math.max(best, reached);
                }
            }
            memo.put(from, best);
            return best;
        }

        private boolean isALiteral(String p) {
            return whole.contains(p) || whole.contains(p + " ") || whole.contains(" " + p)
                    || whole.contains(" " + p + " ");
        }

        private boolean startsALiteral(String p) {
            return hasPrefix(byStart, p) || hasPrefix(byStart, " " + p);
        }

        private boolean endsALiteral(String p) {
            return hasPrefix(byEnd, reversed(p)) || hasPrefix(byEnd, reversed(p + " "));
        }

        private static boolean hasPrefix(TreeSet<String> sorted, String prefix) {
            String next = sorted.ceiling(prefix);
            return next != null && next.startsWith(prefix);
        }

        private static String reversed(String s) {
            return new StringBuilder(s).reverse().toString();
        }
    }

    /** The backticked log lines of the page's tables (see the class comment), with {@code \|} read as {@code |}. */
    static List<String> quotedLines(String page) {
        List<String> out = new ArrayList<>();
        boolean inTable = false;
        for (String row : page.split("\n")) {
            if (!row.startsWith("|")) {
                inTable = false;
                continue;
            }
            if (row.startsWith("| line |")) {
                inTable = true;
                continue;
            }
            if (!inTable || row.startsWith("|---")) {
                continue;
            }
            String[] cells = row.substring(1).split("(?<!\\\\)\\|");
            for (int c = 0; c < cells.length; c++) {
                Matcher m = SPAN.matcher(cells[c]);
                while (m.find()) {
                    String span = m.group(1).replace("\\|", "|");
                    boolean fragment = span.contains(" ") && span.length() >= 20
                            && !Character.isUpperCase(span.charAt(0));
                    if (c == 0 || fragment) {
                        out.add(span);
                    }
                }
            }
        }
        return out;
    }

    /** Every string literal of provider-*{@code /src/main/java}, concatenations of literals joined. */
    private static Literals literals() throws IOException {
        List<String> all = new ArrayList<>();
        List<Path> sources;
        try (Stream<Path> modules = Files.list(ROOT)) {
            List<Path> mains = modules.filter(p -> p.getFileName().toString().startsWith("provider-"))
                    .map(p -> p.resolve("src/main/java")).filter(Files::isDirectory).collect(Collectors.toList());
            sources = new ArrayList<>();
            for (Path main : mains) {
                try (Stream<Path> files = Files.walk(main)) {
                    files.filter(p -> p.toString().endsWith(".java")).forEach(sources::add);
                }
            }
        }
        assertThat(sources).as("the providers' main sources").hasSizeGreaterThan(50);
        for (Path source : sources) {
            for (String literal : literals(Files.readString(source, StandardCharsets.UTF_8))) {
                // a log line's {} is a value: the text around it are two literals
                all.addAll(Arrays.asList(literal.split("\\{\\}", -1)));
            }
        }
        return new Literals(all);
    }

    /** The string literals of one source file, a literal followed by {@code +} and another literal read as one. */
    static List<String> literals(String java) {
        List<String> out = new ArrayList<>();
        StringBuilder current = null; // the literal being joined, until something other than + and blanks follows
        int i = 0;
        int n = java.length();
        while (i < n) {
            char c = java.charAt(i);
            if (c == '/' && i + 1 < n && java.charAt(i + 1) == '/') {
                i = java.indexOf('\n', i);
                i = i < 0 ? n : i;
            } else if (c == '/' && i + 1 < n && java.charAt(i + 1) == '*') {
                i = java.indexOf("*/", i + 2);
                i = i < 0 ? n : i + 2;
            } else if (c == '\'') {
                i = java.charAt(i + 1) == '\\' ? java.indexOf('\'', i + 3) + 1 : i + 3;
            } else if (c == '"') {
                StringBuilder lit = new StringBuilder();
                i++;
                while (i < n && java.charAt(i) != '"') {
                    char d = java.charAt(i);
                    if (d == '\\' && i + 1 < n) {
                        char e = java.charAt(++i);
                        lit.append(e == 'n' ? '\n' : e == 't' ? '\t' : e);
                    } else {
                        lit.append(d);
                    }
                    i++;
                }
                i++;
                if (current == null) {
                    current = lit;
                } else {
                    current.append(lit);
                }
                // joined with the next literal only if just "+" and blanks come between
                int j = i;
                while (j < n && Character.isWhitespace(java.charAt(j))) {
                    j++;
                }
                if (j < n && java.charAt(j) == '+') {
                    int k = j + 1;
                    while (k < n && Character.isWhitespace(java.charAt(k))) {
                        k++;
                    }
                    if (k < n && java.charAt(k) == '"') {
                        i = k;
                        continue;
                    }
                }
                out.add(current.toString());
                current = null;
            } else {
                i++;
            }
        }
        return out;
    }
}
