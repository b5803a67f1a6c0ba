package io.ehrelay.internal.rpc;

import java.io.IOException;
import java.net.InetAddress;
import java.util.Arrays;

import io.ehrelay.spi.Clock;
import io.ehrelay.spi.ClusterSecret;

/**
 * What the cluster secret costs an RMI or Hessian call on the receiving side: a session check as the relay does
 * it (the caller's address parsed from its text, then {@link RpcSessions#check}), in nanoseconds per call, median
 * of 9 rounds of 1,000,000 calls. Compare with a batch's own time on the wire (a 1 MB batch at 500 MB/s: 2 ms).
 *
 * <p>Run: {@code benchmarks/run SessionCheckBench}.
 */
public final class SessionCheckBench {

    private SessionCheckBench() {
    }

    public static void main(String[] args) throws Exception {
        RpcSessions sessions = new RpcSessions(ClusterSecret.of("correct-horse-battery-staple"), Clock.SYSTEM,
                (h, w) -> { });
        InetAddress here = InetAddress.getByName("127.0.0.1");
        RpcSessions.Credentials session = RpcSessions.open(ClusterSecret.of("correct-horse-battery-staple"), "bench",
                new RpcSessions.Listener() {
                    @Override
                    public byte[] challenge() {
                        return sessions.challenge();
                    }

                    @Override
                    public byte[] authenticate(byte[] challenge, byte[] response) throws IOException {
                        return sessions.authenticate("bench", here, challenge, response);
                    }
                });
        int calls = 1_000_000;
        long[] nanosPerCall = new long[9];
        long sink = 0;
        for (int round = 0; round < nanosPerCall.length + 3; round++) {
            byte[][] credentials = new byte[calls][];
            for (int i = 0; i < calls; i++) {
                credentials[i] = session.next(); // the caller's cost, not counted: the listener's is measured
            }
            long t0 = System.nanoTime();
            for (int i = 0; i < calls; i++) {
                sink += sessions.check(credentials[i], InetAddress.getByName("127.0.0.1")).length();
            }
            if (round >= 3) { // the first rounds warm up
                nanosPerCall[round - 3] = (System.nanoTime() - t0) / calls;
            }
        }
        Arrays.sort(nanosPerCall);
        System.out.printf("session check: %d ns per call (median of %d rounds of %,d; min %d, max %d) [%d]%n",
                nanosPerCall[nanosPerCall.length / 2], nanosPerCall.length, calls, nanosPerCall[0],
                nanosPerCall[nanosPerCall.length - 1], sink % 10);
    }
}
