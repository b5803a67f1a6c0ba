package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two CacheManagers in two JVM processes on 127.0.0.1, replicating over TCP: the reader checks that every key
 * arrived and compares a sample of values byte for byte. Small steps of the replay itself.
 */
@Timeout(300)
class TwoProcessReplicationTest {

    @TempDir
    Path dir;

    private Replay replay;
    private Path log;

    @BeforeEach
    void setUp() throws Exception {
        replay = new Replay();
        replay.heap = "512m";
        replay.stepTimeoutSeconds = 120;
        log = dir.resolve("nodes.log");
        Files.createFile(log);
    }

    private void assertOk(StepResult r) throws Exception {
        assertThat(r.outcome).as("step outcome; node log:%n%s", Files.readString(log)).isEqualTo("ok");
    }

    @Test
    void manualDiscovery_everyElementArrivesIntact() throws Exception {
        StepResult r = replay.transfer("E2", "tcp", 20_000, 1280, log);
        assertOk(r);
        assertThat(r.seconds).isPositive();
        assertThat(r.readerPeakHeap).isPositive();
    }

    @Test
    void defaultProfile_userSettings_everyElementArrives_andTheCostsAreMeasured() throws Exception {
        NodeProcess.profile = NodeProcess.DEFAULT;
        StepResult r;
        try {
            r = replay.transfer("E2", "tcp", 20_000, 1280, log);
        } finally {
            NodeProcess.profile = NodeProcess.TUNED;
        }
        assertOk(r);
        assertThat(r.profile).isEqualTo("default");
        assertThat(r.writerCpuSeconds).as("writer CPU s").isPositive();
        assertThat(r.readerCpuSeconds).as("reader CPU s").isPositive();
        // the writer makes every value it puts: at least one byte allocated per byte replicated
        assertThat(r.allocPerByte(r.writerAllocBytes)).as("writer allocation per byte").isGreaterThanOrEqualTo(1.0);
        assertThat(r.allocPerByte(r.readerAllocBytes)).as("reader allocation per byte").isPositive();
    }

    @Test
    void largeElements_arriveIntact() throws Exception {
        assertOk(replay.transfer("E1", "tcp", 500, 327_680, log));
    }

    @Test
    void multicastDiscoveryOnLoopback_findsThePeerAndReplicates() throws Exception {
        replay.discovery = "multicast";
        assertOk(replay.transfer("E2", "tcp", 5_000, 1280, log));
    }

    @Test
    void rawReference_carriesTheSameBytes() throws Exception {
        assertOk(replay.transfer("E2", "raw", 20_000, 1280, log));
    }

    @Test
    void stockRmiBaseline_replicatesBetweenTheSameKindOfProcesses() throws Exception {
        assertOk(replay.transfer("E2", "stock-rmi", 5_000, 1280, log));
    }

    @Test
    void stockRmiSyncBaseline_eachPutWaitsForTheReader() throws Exception {
        assertThat(replay.nodeArgs("writer", "stock-rmi-sync", 1, 1, "async"))
                .contains("transport=stock-rmi", "mode=sync");
        StepResult r = replay.transfer("E2", "stock-rmi-sync", 2_000, 1280, log);
        assertOk(r);
        assertThat(r.transport).isEqualTo("stock-rmi-sync");
        // synchronous: the last element was on the reader before the writer's last put returned
        assertThat(r.seconds).isLessThanOrEqualTo(r.putSeconds + 0.001);
    }

    @Test
    void rmi_stockStyleRmiUrls_everyElementArrivesIntact() throws Exception {
        assertOk(replay.transfer("E2", "rmi", 5_000, 1280, log));
        assertOk(replay.transfer("E1", "rmi", 200, 327_680, log));
    }

    @Test
    void rmi_synchronousPuts_doNotHitTheNagleDelayedAckPlateau() throws Exception {
        assertNoNaglePlateau("rmi");
    }

    @Test
    void synchronousPuts_doNotHitTheNagleDelayedAckPlateau() throws Exception {
        assertNoNaglePlateau("tcp");
    }

    /** Nagle's algorithm meeting delayed ACKs shows as ~40 ms per call; TCP_NODELAY keeps it far away. */
    private void assertNoNaglePlateau(String transport) throws Exception {
        replay.e3Calls = 300;
        replay.e3Payloads = Replay.E3_PAYLOADS; // every payload, up to 16 KB (the verdict set runs 3 of them)
        List<StepResult> points = replay.latency(transport, log);
        assertThat(points).hasSize(Replay.E3_PAYLOADS.length);
        for (StepResult p : points) {
            assertOk(p);
            assertThat(p.p50Micros).as("p50 at %d B", p.size).isLessThan(20_000);
        }
    }
}
