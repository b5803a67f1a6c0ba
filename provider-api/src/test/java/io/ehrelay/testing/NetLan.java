package io.ehrelay.testing;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Hosts on one network, for tests that need several machines: {@code n} network namespaces, each with an
 * interface {@code eth0} at {@code 198.18.0.(i+1)/24} (the benchmarking range, used by no network of this
 * machine), all plugged into a bridge in a namespace of their own. Nothing reaches the machine's own network or
 * loopback; {@link #close()} removes every namespace. Needs root ({@link NetNamespace#available()}).
 */
public final class NetLan implements AutoCloseable {

    private final NetNamespace bridge;
    private final List<NetNamespace> hosts = new ArrayList<>();

    private NetLan(NetNamespace bridge) {
        this.bridge = bridge;
    }

    /** {@code n} hosts on one bridge. */
    public static NetLan create(String prefix, int n) throws IOException {
        NetLan lan = new NetLan(NetNamespace.create(prefix + "-sw"));
        try {
            lan.bridge.ip("link", "add", "br0", "type", "bridge");
            lan.bridge.ip("link", "set", "br0", "up");
            for (int i = 0; i < n; i++) {
                NetNamespace host = NetNamespace.create(prefix + "-h" + i);
                lan.hosts.add(host);
                host.ip("link", "add", "eth0", "type", "veth", "peer", "name", "p" + i, "netns", lan.bridge.name());
                lan.bridge.ip("link", "set", "p" + i, "master", "br0");
                lan.bridge.ip("link", "set", "p" + i, "up");
                host.ip("addr", "add", lan.address(i) + "/24", "dev", "eth0");
                host.ip("link", "set", "eth0", "up");
            }
        } catch (IOException | RuntimeException e) {
            lan.close();
            throw e;
        }
        return lan;
    }

    /** Host {@code i}'s namespace. */
    public NetNamespace host(int i) {
        return hosts.get(i);
    }

    /** Host {@code i}'s address. */
    public String address(int i) {
        return "198.18.0." + (i + 1);
    }

    @Override
    public void close() throws IOException {
        IOException first = null;
        for (NetNamespace h : hosts) {
            try {
                h.close();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        try {
            bridge.close();
        } catch (IOException e) {
            first = first == null ? e : first;
        }
        if (first != null) {
            throw first;
        }
    }
}
