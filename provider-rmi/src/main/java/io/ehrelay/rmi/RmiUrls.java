package io.ehrelay.rmi;

/**
 * Parses the peer spellings RMI users write: stock {@code rmiUrls} entries ({@code //host:port/cacheName},
 * optionally with {@code rmi:}), a URL base ({@code //host:port}) or a plain {@code host:port}; IPv6 hosts in
 * brackets. Cache names are taken verbatim after the first {@code /} following the port, so names holding
 * {@code #}, {@code ?} or {@code /} survive (the stock {@code Naming} parser cuts them).
 */
final class RmiUrls {

    private RmiUrls() {
    }

    /** The {@code host:port} endpoint of an entry. */
    static String endpoint(String entry) {
        String s = entry.trim();
        if (s.startsWith("rmi:")) {
            s = s.substring(4);
        }
        if (s.startsWith("//")) {
            s = s.substring(2);
        }
        int end;
        if (s.startsWith("[")) {
            int close = s.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("unclosed [ in '" + entry + "'");
            }
            end = s.indexOf('/', close);
        } else {
            end = s.indexOf('/');
        }
        String hostPort = end < 0 ? s : s.substring(0, end);
        host(hostPort);
        port(hostPort);
        return hostPort;
    }

    /** The host of a {@code host:port} endpoint, without IPv6 brackets. */
    static String host(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("no host:port in '" + endpoint + "'");
        }
        String host = endpoint.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("no host in '" + endpoint + "'");
        }
        return host;
    }

    static int port(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        int port;
        try {
            port = Integer.parseInt(endpoint.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("no port number in '" + endpoint + "'");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port " + port + " out of range in '" + endpoint + "'");
        }
        return port;
    }

    /** {@code host:port}, with brackets around an IPv6 host. */
    static String endpoint(String host, int port) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
