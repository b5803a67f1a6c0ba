package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import io.ehrelay.testing.SocketAudit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The network rule in the replay: every step checks each node, once it is ready, for sockets beyond loopback and
 * multicast groups joined beyond {@code lo} ({@link NodeProcess#checkListeners}), and fails naming them. Here a
 * small E1 step of every transport the replay runs (the old JGroups module's TCP and UDP configurations among
 * them) must pass that check, and so must those that discover by multicast with {@code --discovery multicast}.
 */
@Timeout(900)
class ReplayListenersTest {

    @TempDir
    Path dir;

    @Test
    void everyTransportsNodes_listenOnLoopbackOnly() throws Exception {
        assertThat(SocketAudit.available()).as("the replay's check reads Linux's /proc").isTrue();
        List<String> failed = new ArrayList<>();
        for (String discovery : new String[] {"manual", "multicast"}) {
            Replay replay = new Replay();
            replay.heap = "256m";
            replay.stepTimeoutSeconds = 120;
            replay.discovery = discovery;
            for (String transport : Profiles.ALL) {
                if (Profiles.isSyncVariant(transport) || (discovery.equals("multicast")
                        && !List.of("tcp", "rmi", "hessian", Profiles.STOCK_RMI).contains(transport))) {
                    continue;
                }
                Path log = dir.resolve(transport + "-" + discovery + ".log");
                Files.createFile(log);
                StepResult r = replay.transfer("E1", transport, 300, 1280, log);
                if (!r.outcome.equals("ok")) {
                    failed.add(transport + " (" + discovery + "): " + r.outcome + "\n" + Files.readString(log));
                }
            }
        }
        assertThat(failed).isEmpty();
    }
}
