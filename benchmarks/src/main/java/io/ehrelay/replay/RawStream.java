package io.ehrelay.replay;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The replay's physical limit: the same values as a step's, written by one process to another over a raw TCP
 * loopback stream ({@code raw} in the report), the reading side keeping them as a cache would. No replication,
 * no serialization: what the machine can move.
 */
final class RawStream {

    private RawStream() {
    }

    /** The reading side: listens on 127.0.0.1, keeps what arrives, checks a sample; says DONE with its timings. */
    static void read(int count, Values values) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            ReplayNode.say("READY 127.0.0.1:" + ((InetSocketAddress) server.getLocalAddress()).getPort());
            try (SocketChannel ch = server.accept()) {
                DataInputStream in = new DataInputStream(new BufferedInputStream(Channels.newInputStream(ch), 1 << 20));
                int warmCount = Profiles.warmupCount(values.size());
                for (int n = 0; n < warmCount; n++) {
                    in.readInt();
                    in.readFully(new byte[in.readInt()]);
                }
                System.gc();
                ReplayNode.markCost();
                ReplayNode.say("WARM");
                long first = 0;
                long last = 0;
                int bad = 0;
                int stride = Math.max(1, count / 1000);
                byte[][] kept = new byte[count][];
                for (int n = 0; n < count; n++) {
                    int key = in.readInt();
                    int len = in.readInt();
                    byte[] value = new byte[len];
                    in.readFully(value);
                    long now = Clock.micros();
                    if (n == 0) {
                        first = now;
                    }
                    last = now;
                    kept[key] = value;
                }
                int missing = 0;
                for (int k = 0; k < count; k++) {
                    if (kept[k] == null) {
                        missing++;
                    } else if (k % stride == 0 && !values.matches(k, kept[k])) {
                        bad++;
                    }
                }
                ReplayNode.logCpu("reader raw " + count);
                ReplayNode.say("DONE " + first + " " + last + " " + missing + " " + bad + " " + ReplayNode.peakHeap());
            }
        }
        ReplayNode.waitForExit();
    }

    /** The writing side: sends {@code count} values to {@code to} after the warm-up; says WROTE with its timings. */
    static void write(InetSocketAddress to, int count, Values values) throws IOException {
        try (SocketChannel out = SocketChannel.open()) {
            out.socket().setTcpNoDelay(true);
            out.connect(to);
            ReplayNode.say("READY");
            DataOutputStream data = new DataOutputStream(new BufferedOutputStream(Channels.newOutputStream(out), 1 << 20));
            for (int k = 0, n = Profiles.warmupCount(values.size()); k < n; k++) {
                byte[] v = values.make(k);
                data.writeInt(-1 - k);
                data.writeInt(v.length);
                data.write(v);
            }
            data.flush();
            System.gc();
            ReplayNode.waitFor("GO");
            ReplayNode.markCost();
            // the writing node holds what it sends, as the writing cache does in E1/E2
            byte[][] held = new byte[count][];
            long firstCpu = ReplayNode.threadCpuNanos();
            long first = Clock.micros();
            for (int k = 0; k < count; k++) {
                byte[] v = values.make(k);
                held[k] = v;
                data.writeInt(k);
                data.writeInt(v.length);
                data.write(v);
            }
            data.flush();
            long last = Clock.micros();
            long loopCpu = ReplayNode.threadCpuNanos() - firstCpu;
            ReplayNode.logCpu("writer raw " + count + " put loop " + (last - first) / 1000 + " ms");
            ReplayNode.say("WROTE " + first + " " + last + " " + ReplayNode.peakHeap() + " 0 0 " + (firstCpu < 0 ? -1 : loopCpu));
            ReplayNode.waitForExit();
        }
        ReplayNode.say("BYE");
    }
}
