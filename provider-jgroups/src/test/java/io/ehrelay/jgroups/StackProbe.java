package io.ehrelay.jgroups;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

import net.sf.ehcache.CacheManager;
import org.jgroups.JChannel;

/**
 * A process of {@link JGroupsListenersTest}, run inside a network namespace: starts one JGroups stack, prints
 * {@code READY <pid>}, and stops when its standard input closes or says anything.
 * <ul>
 * <li>{@code plain FILE}: the stack file as JGroups alone runs it ({@code new JChannel(FILE)});</li>
 * <li>{@code ehrelay FILE PROPERTIES}: a CacheManager whose ehrelay JGroups provider has {@code file=FILE} and the
 * given provider properties.</li>
 * </ul>
 */
public final class StackProbe {

    private StackProbe() {
    }

    public static void main(String[] args) throws Exception {
        AutoCloseable running;
        if (args[0].equals("plain")) {
            JChannel channel = new JChannel(args[1]);
            channel.connect("stack-probe");
            running = channel;
        } else {
            String xml = "<ehcache name=\"probe\" updateCheck=\"false\" monitoring=\"off\">\n"
                    + "  <cacheManagerPeerProviderFactory class=\"" + JGroupsCacheManagerPeerProviderFactory.class.getName()
                    + "\"\n      properties=\"file=" + args[1] + ", channelName=stack-probe, " + args[2] + "\"/>\n"
                    + "  <cache name=\"c\" maxEntriesLocalHeap=\"100\">\n"
                    + "    <cacheEventListenerFactory class=\"" + JGroupsCacheReplicatorFactory.class.getName() + "\"/>\n"
                    + "  </cache>\n</ehcache>\n";
            CacheManager cm = new CacheManager(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
            running = cm::shutdown;
        }
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            in.readLine();
        } finally {
            running.close();
        }
    }
}
