package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

import io.ehrelay.contract.Await;
import io.ehrelay.contract.TestKeyStores;
import io.ehrelay.internal.config.TlsStores;
import io.ehrelay.spi.Clock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link TlsChannel} on its own, over a connection on 127.0.0.1: a reader and a writer at once on both sides
 * (also with TLS 1.3 KeyUpdates every 64 KiB, in a JVM of their own), deadlines, and a {@link TlsChannel#close} that
 * neither waits for a peer that does not read nor leaves a reader blocked.
 */
@Timeout(120)
class TcpTlsChannelTest {

    private static Path store;
    private final List<AutoCloseable> open = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool();

    @BeforeAll
    static void keyStore() throws Exception {
        store = TestKeyStores.selfSigned("tcp-channel", "ehrelay-channel", null);
    }

    @AfterEach
    void close() throws Exception {
        threads.shutdownNow();
        for (AutoCloseable c : open) {
            c.close();
        }
    }

    private static SSLContext context(Path store) throws Exception {
        return TlsStores.context(store.toString(), TestKeyStores.PASSWORD, store.toString(), TestKeyStores.PASSWORD,
                "PKCS12");
    }

    /** A connected pair: [0] the accepting side, [1] the connecting side; handshake not done. */
    private TlsChannel[] pair(SSLContext context) throws Exception {
        return pair(context, open);
    }

    private static TlsChannel[] pair(SSLContext context, List<AutoCloseable> open) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            SocketChannel accepted = server.accept();
            TlsChannel[] pair = {TlsChannel.server(accepted, context, true, Clock.SYSTEM),
                    TlsChannel.client(client, context, "127.0.0.1", 0, Clock.SYSTEM)};
            open.add(pair[0]);
            open.add(pair[1]);
            return pair;
        }
    }

    private void handshake(TlsChannel[] pair) throws Exception {
        Future<?> server = threads.submit(() -> {
            pair[0].handshake(5000);
            return null;
        });
        pair[1].handshake(5000);
        server.get(10, TimeUnit.SECONDS);
    }

    @Test
    void bothSides_readAndWriteAtOnce_everyByteArrivesInOrder() throws Exception {
        TlsChannel[] pair = pair(context(store));
        handshake(pair);
        assertThat(transfer(pair, 32 << 20)).isEqualTo(2L * (32 << 20));
    }

    /** TLS 1.3 KeyUpdates (the JDK sends them after {@code jdk.tls.keyLimits} bytes), set for a JVM of its own. */
    @Test
    void keyUpdates_whileBothSidesWrite_areAnswered() throws Exception {
        Path security = Files.createTempFile("key-limits", ".security");
        Files.write(security, ("jdk.tls.keyLimits=AES/GCM/NoPadding KeyUpdate 2^16, "
                + "ChaCha20-Poly1305 KeyUpdate 2^16\n").getBytes(StandardCharsets.ISO_8859_1));
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.security.properties=" + security, "-Djavax.net.debug=ssl:handshake",
                "-cp", System.getProperty("java.class.path"), TcpTlsChannelTest.class.getName(), store.toString(),
                String.valueOf(8 << 20)).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(tail(out)).isZero();
        assertThat(out).as("KeyUpdates happened").contains("Consuming KeyUpdate post-handshake message")
                .contains("transferred " + 2L * (8 << 20));
        Files.delete(security);
    }

    private static String tail(String s) {
        return s.length() < 4000 ? s : s.substring(s.length() - 4000);
    }

    /** The child JVM of {@link #keyUpdates_whileBothSidesWrite_areAnswered}: {@code <store> <bytes>}. */
    public static void main(String[] args) throws Exception {
        List<AutoCloseable> open = new ArrayList<>();
        ExecutorService threads = Executors.newCachedThreadPool();
        try {
            TlsChannel[] pair = pair(context(Path.of(args[0])), open);
            Future<?> server = threads.submit(() -> {
                pair[0].handshake(5000);
                return null;
            });
            pair[1].handshake(5000);
            server.get(10, TimeUnit.SECONDS);
            System.out.println("transferred " + transfer(pair, Integer.parseInt(args[1]), threads));
        } finally {
            threads.shutdownNow();
            for (AutoCloseable c : open) {
                c.close();
            }
        }
    }

    private long transfer(TlsChannel[] pair, int bytes) throws Exception {
        return transfer(pair, bytes, threads);
    }

    /** Each side writes {@code bytes} (gathering writes of random sizes) and reads the other's, checking each. */
    private static long transfer(TlsChannel[] pair, int bytes, ExecutorService threads) throws Exception {
        List<Future<Long>> done = new ArrayList<>();
        for (int side = 0; side < 2; side++) {
            TlsChannel out = pair[side];
            TlsChannel in = pair[1 - side];
            long seed = side;
            done.add(threads.submit(() -> {
                Random sizes = new Random(seed + 10);
                byte[] all = bytes(seed, bytes);
                int at = 0;
                while (at < bytes) {
                    int a = Math.min(bytes - at, 1 + sizes.nextInt(70_000));
                    int b = Math.min(bytes - at - a, sizes.nextInt(40));
                    ByteBuffer first = ByteBuffer.wrap(all, at, a);
                    ByteBuffer second = ByteBuffer.allocateDirect(b);
                    second.put(all, at + a, b).flip();
                    out.write(new ByteBuffer[] {first, second}, 0, 2);
                    at += a + b;
                }
                return (long) at;
            }));
            done.add(threads.submit(() -> {
                Random sizes = new Random(seed + 20);
                byte[] expected = bytes(seed, bytes);
                byte[] got = new byte[bytes];
                int at = 0;
                while (at < bytes) {
                    int want = Math.min(bytes - at, 1 + sizes.nextInt(3) * sizes.nextInt(40_000));
                    ByteBuffer b = sizes.nextBoolean() ? ByteBuffer.allocateDirect(want) : ByteBuffer.allocate(want);
                    int n = in.read(b);
                    if (n < 0) {
                        throw new IOException("end of stream after " + at + " bytes");
                    }
                    b.flip();
                    b.get(got, at, n);
                    at += n;
                }
                if (!Arrays.equals(expected, got)) {
                    throw new AssertionError("bytes differ");
                }
                return 0L;
            }));
        }
        long total = 0;
        for (Future<Long> f : done) {
            total += f.get(60, TimeUnit.SECONDS);
        }
        return total;
    }

    private static byte[] bytes(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void aSilentPeer_failsTheHandshakeAtItsDeadline() throws Exception {
        TlsChannel[] pair = pair(context(store));
        long start = System.nanoTime();
        assertThatThrownBy(() -> pair[0].handshake(300)).isInstanceOf(SocketTimeoutException.class);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isBetween(250L, 3000L);
    }

    @Test
    void aReadDeadline_passes_withoutLosingTheConnection() throws Exception {
        TlsChannel[] pair = pair(context(store));
        handshake(pair);
        ByteBuffer b = ByteBuffer.allocate(16);
        assertThatThrownBy(() -> pair[0].read(b, pair[0].deadline(200))).isInstanceOf(SocketTimeoutException.class);
        pair[1].write(ByteBuffer.wrap("later".getBytes(StandardCharsets.UTF_8)));
        assertThat(pair[0].read(b, pair[0].deadline(5000))).isEqualTo(5);
    }

    @Test
    void anUntrustedCertificate_failsTheHandshake_onBothSides() throws Exception {
        Path other = TestKeyStores.selfSigned("tcp-channel-other", "ehrelay-other", null);
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            SocketChannel client = SocketChannel.open(server.getLocalAddress());
            TlsChannel accepting = TlsChannel.server(server.accept(), context(store), true, Clock.SYSTEM);
            TlsChannel connecting = TlsChannel.client(client, context(other), "127.0.0.1", 0, Clock.SYSTEM);
            open.add(accepting);
            open.add(connecting);
            Future<?> s = threads.submit(() -> {
                accepting.handshake(5000);
                return null;
            });
            assertThatThrownBy(() -> connecting.handshake(5000)).isInstanceOf(SSLException.class);
            assertThatThrownBy(() -> s.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(SSLException.class);
        }
    }

    @Test
    void close_endsABlockedReader_andDoesNotWaitForAPeerThatDoesNotRead() throws Exception {
        TlsChannel[] pair = pair(context(store));
        handshake(pair);
        CompletableFuture<Throwable> reader = new CompletableFuture<>();
        threads.submit(() -> {
            try {
                pair[0].read(ByteBuffer.allocate(1024));
                reader.complete(null);
            } catch (Throwable t) {
                reader.complete(t);
            }
        });
        // pair[1] never reads: pair[0]'s writer blocks once the socket buffers are full
        CompletableFuture<Throwable> writer = new CompletableFuture<>();
        AtomicReference<Thread> writing = new AtomicReference<>();
        threads.submit(() -> {
            writing.set(Thread.currentThread());
            try {
                while (true) {
                    pair[0].write(ByteBuffer.allocate(1 << 20));
                }
            } catch (Throwable t) {
                writer.complete(t);
            }
        });
        Await.until(() -> waitsToWrite(writing.get()), () -> "the writer never waited for the socket");
        assertThat(writer).as("the writer is blocked").isNotDone();
        long start = System.nanoTime();
        pair[0].close();
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).as("ms in close").isLessThan(1000);
        assertThat(reader.get(5, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
        assertThat(writer.get(5, TimeUnit.SECONDS)).isInstanceOf(IOException.class);
    }

    /** Whether {@code t} waits in {@link TlsChannel#write} for the socket to take more (the buffers are full). */
    private static boolean waitsToWrite(Thread t) {
        if (t == null) {
            return false;
        }
        boolean selecting = false;
        for (StackTraceElement frame : t.getStackTrace()) {
            if (frame.getClassName().equals(TlsSocket.class.getName()) && frame.getMethodName().equals("await")) {
                selecting = true;
            } else if (frame.getClassName().equals(TlsWriter.class.getName())
                    && frame.getMethodName().equals("write")) {
                return selecting;
            }
        }
        return false;
    }

    @Test
    void close_sendsCloseNotify_theOtherSideReadsTheEnd() throws Exception {
        TlsChannel[] pair = pair(context(store));
        handshake(pair);
        pair[1].write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
        pair[1].close();
        ByteBuffer b = ByteBuffer.allocate(16);
        assertThat(pair[0].read(b, pair[0].deadline(5000))).isEqualTo(3);
        assertThat(pair[0].read(b, pair[0].deadline(5000))).isEqualTo(-1);
    }
}
