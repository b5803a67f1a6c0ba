package io.ehrelay.hessian;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/** Peer endpoints are their endpoint URLs, {@code http(s)://host:port/path}, in one canonical spelling. */
final class PeerUrls {

    private PeerUrls() {
    }

    static String normalize(String entry) {
        URI u;
        try {
            u = new URI(entry.trim());
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not a URL: '" + entry + "'");
        }
        String scheme = u.getScheme() == null ? null : u.getScheme().toLowerCase(Locale.ROOT);
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw new IllegalArgumentException("not an http(s) URL: '" + entry + "'");
        }
        if (u.getHost() == null || u.getPort() < 1) {
            throw new IllegalArgumentException("no host:port in '" + entry + "'");
        }
        String path = u.getRawPath() == null || u.getRawPath().isEmpty() ? "/ehrelay" : u.getRawPath();
        if (u.getRawQuery() != null || u.getRawFragment() != null) {
            throw new IllegalArgumentException("no query or fragment allowed in '" + entry + "'");
        }
        String host = u.getHost().toLowerCase(Locale.ROOT);
        return scheme + "://" + host + ":" + u.getPort() + path;
    }
}
