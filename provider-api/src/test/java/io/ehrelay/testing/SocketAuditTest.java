package io.ehrelay.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** {@link SocketAudit} reads {@code /proc} as Linux writes it, and names what breaks the network rule. */
class SocketAuditTest {

    // /proc/net/tcp: a listener on 0.0.0.0:7900, one on 127.0.0.1:7800 with 3 connections not accepted yet, an
    // established connection (not a listener)
    private static final String TCP = ""
            + "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
            + "   0: 00000000:1EDC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 101 1 0\n"
            + "   1: 0100007F:1E78 00000000:0000 0A 00000000:00000003 00:00000000 00000000     0        0 102 1 0\n"
            + "   2: 0100007F:1E78 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 103 1 0\n"
            + "   3: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 999 1 0\n";
    // /proc/net/udp: 0.0.0.0:7500 (diagnostics), 230.0.0.95:45595 (a socket bound to its group)
    private static final String UDP = ""
            + "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n"
            + "  10: 00000000:1D4C 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 201 2 0 0\n"
            + "  11: 5F0000E6:B21B 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 202 2 0 0\n";
    // /proc/net/tcp6: [::1]:7800 listening
    private static final String TCP6 = ""
            + "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
            + "   0: 00000000000000000000000001000000:1E78 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 301 1 0\n";
    private static final String IGMP = ""
            + "Idx\tDevice    : Count Querier\tGroup    Users Timer\tReporter\n"
            + "1\tlo        :     2      V3\n"
            + "\t\t\t\t4B4B00E0     1 0:00000000\t\t0\n"
            + "\t\t\t\t010000E0     1 0:00000000\t\t0\n"
            + "4\teth0      :     2      V3\n"
            + "\t\t\t\t4B4B00E0     1 0:00000000\t\t0\n"
            + "\t\t\t\t010000E0     1 0:00000000\t\t0\n";
    private static final String IGMP6 = ""
            + "1    lo              ff020000000000000000000000000001     1 0000000C 0\n"
            + "4    eth0            ff0200000000000000000001ff000002     1 00000004 0\n"
            + "4    eth0            ff020000000000000000000000000001     1 0000000C 0\n"
            + "4    eth0            ff0e0000000000000000000000750075     1 00000004 0\n";

    @Test
    void socketTables_areReadForTheProcesssInodes_listenersOnly() throws Exception {
        List<SocketAudit.Socket> tcp = SocketAudit.parseSockets("tcp", TCP, Set.of(101L, 102L, 103L));
        assertThat(tcp).extracting(Object::toString).containsExactly("tcp 0.0.0.0:7900", "tcp 127.0.0.1:7800");
        assertThat(tcp).extracting(socket -> socket.queued).as("connections not accepted yet").containsExactly(0, 3);
        assertThat(SocketAudit.parseSockets("udp", UDP, Set.of(201L, 202L))).extracting(Object::toString)
                .containsExactly("udp 0.0.0.0:7500", "udp 230.0.0.95:45595");
        assertThat(SocketAudit.parseSockets("tcp", TCP6, Set.of(301L))).extracting(Object::toString)
                .containsExactly("tcp [0:0:0:0:0:0:0:1]:7800");
    }

    @Test
    void memberships_areReadPerInterface() throws Exception {
        assertThat(SocketAudit.parseIgmp(IGMP)).extracting(Object::toString).containsExactly(
                "224.0.75.75 on lo", "224.0.0.1 on lo", "224.0.75.75 on eth0", "224.0.0.1 on eth0");
        assertThat(SocketAudit.parseIgmp6(IGMP6)).extracting(Object::toString).contains(
                "ff0e:0:0:0:0:0:75:75 on eth0", "ff02:0:0:0:0:1:ff00:2 on eth0");
    }

    @Test
    void violations_nameWildcardSocketsAndGroupsJoinedBeyondLo_notTheKernelsOwn() throws Exception {
        List<SocketAudit.Socket> sockets = new ArrayList<>(SocketAudit.parseSockets("tcp", TCP,
                Set.of(101L, 102L)));
        sockets.addAll(SocketAudit.parseSockets("udp", UDP, Set.of(201L, 202L)));
        Set<SocketAudit.Membership> groups = new LinkedHashSet<>(SocketAudit.parseIgmp(IGMP));
        groups.addAll(SocketAudit.parseIgmp6(IGMP6));
        SocketAudit audit = new SocketAudit(1, sockets, groups);
        assertThat(audit.violations(null)).containsExactly(
                "listens on tcp 0.0.0.0:7900",
                "receives on udp 0.0.0.0:7500",
                "joined multicast group 224.0.75.75 on eth0",
                "joined multicast group ff0e:0:0:0:0:0:75:75 on eth0");
        // a membership that was there before the process under test started is not its
        SocketAudit before = new SocketAudit(0, Collections.emptyList(), groups);
        assertThat(audit.violations(before)).containsExactly("listens on tcp 0.0.0.0:7900",
                "receives on udp 0.0.0.0:7500");
        // an address the node was told to bind is allowed; the wildcard never is
        SocketAudit bound = new SocketAudit(1, SocketAudit.parseSockets("tcp",
                TCP.replace("00000000:1EDC", "012A12C6:1EDC"), Set.of(101L)), Collections.emptySet());
        assertThat(bound.violations(null)).containsExactly("listens on tcp 198.18.42.1:7900");
        assertThat(bound.violations(null, Set.of(InetAddress.getByName("198.18.42.1")))).isEmpty();
        assertThat(audit.violations(null, Set.of(InetAddress.getByName("198.18.42.1")))).hasSize(4);
    }

    @Test
    void thisJvmsOwnListener_isSeen() throws Exception {
        assumeTrue(SocketAudit.available(), "reads Linux's /proc");
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketAudit audit = SocketAudit.self();
            assertThat(audit.sockets()).extracting(Object::toString)
                    .contains("tcp 127.0.0.1:" + s.getLocalPort());
            assertThat(audit.violations(audit)).isEmpty();
        }
    }
}
