package io.ehrelay.internal.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Pattern;

import io.ehrelay.config.InvalidConfigurationException;

/**
 * Refuses at start, in one line naming the separator, a manual peer list ({@code peers}, {@code rmiUrls}) separated
 * by anything but {@code |}: Ehcache splits {@code properties} on commas (so {@code peers=a:1, b:2} arrives as
 * {@code peers=a:1} and a property {@code b}), and a space makes one entry of two peers. See docs/configuration.md.
 */
public final class PeerListSeparator {

    private PeerListSeparator() {
    }

    /**
     * @param r          the factory's reader, after every part read its properties (its unread ones are checked)
     * @param property   the manual peer list's property ({@code peers}, {@code rmiUrls})
     * @param entries    the list's entries, split on {@code |}
     * @param raw        the factory's raw {@code properties} attribute, or {@code null} when unknown
     * @param separator  the attribute's property separator ({@code null}: a comma)
     * @param isPeer     whether one entry names a peer (the transport's own parser)
     * @throws InvalidConfigurationException naming the entry, the separator to use and the corrected list
     */
    public static void check(PropertyReader r, String property, List<String> entries, String raw, String separator,
                             Predicate<String> isPeer) {
        List<String> corrected = new ArrayList<>();
        String spaced = null;
        for (String entry : entries) {
            List<String> peers = splitAtSpaces(entry, isPeer);
            if (peers.size() > 1 && spaced == null) {
                spaced = entry;
            }
            corrected.addAll(peers);
        }
        if (spaced != null) {
            throw new InvalidConfigurationException("ehrelay " + r.owner() + ": " + property + ": '" + spaced
                    + "' holds a space; separate peers with '|' (" + property + "=" + String.join("|", corrected)
                    + ")");
        }
        if (raw == null) {
            return;
        }
        Map<String, String> unread = r.unread();
        List<String> afterComma = new ArrayList<>();
        String arrivedAs = null;
        String sep = separator == null || separator.isEmpty() ? "," : separator;
        for (String part : raw.split(Pattern.quote(sep))) {
            String p = part.trim();
            if (p.isEmpty() || p.indexOf('=') >= 0) {
                continue;
            }
            String key = RepeatedKeys.key(p);
            if (unread.containsKey(key) && isPeer.test(p)) {
                afterComma.add(p);
                if (arrivedAs == null) {
                    arrivedAs = key;
                }
            }
        }
        if (!afterComma.isEmpty()) {
            corrected.addAll(afterComma);
            throw new InvalidConfigurationException("ehrelay " + r.owner() + ": " + property + ": '"
                    + afterComma.get(0) + "' follows a comma, and Ehcache splits the properties attribute on commas "
                    + "(it arrived as an unknown property '" + arrivedAs + "'); separate peers with '|' (" + property
                    + "=" + String.join("|", corrected) + ")");
        }
    }

    /**
     * The peers one entry names: itself, unless spaces separate two or more peers in it. A part after a space that
     * is no peer on its own stays with the peer before it (an RMI cache name may hold a space).
     */
    static List<String> splitAtSpaces(String entry, Predicate<String> isPeer) {
        String[] words = entry.trim().split("\\s+");
        List<String> out = new ArrayList<>();
        if (words.length < 2) {
            out.add(entry);
            return out;
        }
        int peers = 0;
        StringBuilder current = null;
        for (String w : words) {
            boolean peer = isPeer.test(w);
            if (current == null || peer) {
                if (current != null) {
                    out.add(current.toString());
                }
                current = new StringBuilder(w);
                if (peer) {
                    peers++;
                }
            } else {
                current.append(' ').append(w);
            }
        }
        out.add(current.toString());
        if (peers < 2) {
            out.clear();
            out.add(entry);
        }
        return out;
    }
}
