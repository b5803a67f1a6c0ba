package io.ehrelay.tcp;

import java.net.InetSocketAddress;

/** Parses {@code host:port} endpoints ({@code [v6]:port} too). */
final class Endpoints {

    private Endpoints() {
    }

    static InetSocketAddress parse(String endpoint) {
        for (int i = 0; i < endpoint.length(); i++) {
            if (Character.isWhitespace(endpoint.charAt(i))) {
                throw new IllegalArgumentException("peer '" + endpoint + "' holds a space, which no host name does; "
                        + "separate peers with '|'");
            }
        }
        int colon = endpoint.lastIndexOf(':');
        if (colon <= 0 || colon == endpoint.length() - 1) {
            throw new IllegalArgumentException("peer '" + endpoint + "' is not host:port");
        }
        String host = endpoint.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(endpoint.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("peer '" + endpoint + "' has no numeric port");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("peer '" + endpoint + "' has port outside 1-65535");
        }
        return InetSocketAddress.createUnresolved(host, port);
    }

    static String format(String host, int port) {
        return host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]:" + port : host + ":" + port;
    }
}
