package io.ehrelay.rmi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The sockets' adaptive streams: every byte arrives intact whatever the sizes of reads and writes, mark and
 * reset work across fills, and a connection that waits for its next call holds the small buffers only.
 */
@Timeout(60)
class RmiBufferedStreamsTest {

    private static final int[] SIZES = {1, 100, 8191, 8192, 8193, 100_000, 1_000_000, 5, 300_000, 2};

    @Test
    void callsOfEverySize_arriveIntact_andAWaitingConnectionHoldsOnlyTheSmallBuffers() throws Exception {
        ExecutorService writer = Executors.newSingleThreadExecutor();
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             BufferedSockets.BufferedSocket client = new BufferedSockets.BufferedSocket()) {
            client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()), 2000);
            try (Socket accepted = server.accept()) {
                AdaptiveInput in = new AdaptiveInput(accepted.getInputStream(),
                        BufferedSockets.NONE);
                AdaptiveOutput out = (AdaptiveOutput) client.getOutputStream();
                Random random = new Random(7);
                for (int size : SIZES) {
                    byte[] message = new byte[size];
                    random.nextBytes(message);
                    Future<?> sent = writer.submit(() -> {
                        // ObjectOutputStream's way: mostly 1 KiB pieces, some single bytes, some large arrays
                        Random r = new Random(size);
                        int at = 0;
                        while (at < size) {
                            int n = Math.min(size - at, r.nextInt(10) == 0 ? 1 : r.nextInt(20) == 0 ? 400_000 : 1024);
                            if (n == 1) {
                                out.write(message[at]);
                            } else {
                                out.write(message, at, n);
                            }
                            at += n;
                        }
                        out.flush();
                        assertThat(out.heldBytes()).as("output after flush").isLessThanOrEqualTo(BufferedSockets.SMALL_BYTES);
                        return null;
                    });
                    accepted.setSoTimeout(10_000);
                    byte[] got = new byte[size];
                    Random r = new Random(~size);
                    int at = 0;
                    while (at < size) {
                        if (r.nextInt(7) == 0) {
                            got[at++] = (byte) in.read();
                            continue;
                        }
                        int want = Math.min(size - at, r.nextInt(5) == 0 ? 1 + r.nextInt(600_000) : 1 + r.nextInt(1024));
                        int n = in.read(got, at, want);
                        assertThat(n).isPositive();
                        at += n;
                    }
                    sent.get(10, TimeUnit.SECONDS);
                    assertThat(Arrays.equals(got, message)).as("message of %d bytes", size).isTrue();
                    // the next read waits for the peer: the large buffer goes back first
                    accepted.setSoTimeout(200);
                    assertThatThrownBy(in::read).isInstanceOf(SocketTimeoutException.class);
                    assertThat(in.heldBytes()).as("input while waiting, after %d bytes", size)
                            .isLessThanOrEqualTo(BufferedSockets.SMALL_BYTES);
                }
            }
        } finally {
            writer.shutdownNow();
        }
    }

    /** A stream that hands out one byte per read, as a slow peer does. */
    private static final class Trickle extends InputStream {
        private final ByteArrayInputStream in;

        Trickle(byte[] data) {
            this.in = new ByteArrayInputStream(data);
        }

        @Override
        public int read() {
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            return len == 0 ? 0 : in.read(b, off, 1);
        }

        @Override
        public int available() {
            return Math.min(1, in.available());
        }
    }

    @Test
    void markAndReset_keepTheMarkedBytesAcrossFills() throws IOException {
        byte[] data = new byte[40_000];
        new Random(3).nextBytes(data);
        // JRMP's server reads the magic after mark(4): four fills of one byte each here
        AdaptiveInput in = new AdaptiveInput(new Trickle(data), BufferedSockets.NONE);
        in.mark(4);
        byte[] first = new byte[4];
        for (int i = 0; i < 4; i++) {
            first[i] = (byte) in.read();
        }
        in.reset();
        for (int i = 0; i < 4; i++) {
            assertThat((byte) in.read()).isEqualTo(first[i]).isEqualTo(data[i]);
        }
        // a mark held across more bytes than the small buffer holds
        in.mark(30_000);
        byte[] span = new byte[20_000];
        int at = 0;
        while (at < span.length) {
            at += in.read(span, at, span.length - at);
        }
        in.reset();
        for (int i = 0; i < span.length; i++) {
            assertThat((byte) in.read()).isEqualTo(data[4 + i]);
        }
        // past its limit a mark may be forgotten; reading goes on intact
        in.mark(2);
        byte[] rest = new byte[data.length - 20_004];
        at = 0;
        while (at < rest.length) {
            at += in.read(rest, at, rest.length - at);
        }
        assertThat(rest).isEqualTo(Arrays.copyOfRange(data, 20_004, data.length));
        assertThat(in.read()).isEqualTo(-1);
    }
}
