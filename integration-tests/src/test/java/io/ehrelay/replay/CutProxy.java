package io.ehrelay.replay;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 in front of one node's port, for fault scenarios: it forwards both ways until told to
 * {@link #cut()} (every connection is reset and new ones are closed at once: a network partition), {@link #heal()}
 * again, or {@link #reset()} the connections it carries (a reset in the middle of whatever is in flight). One
 * thread per direction of each connection; test use only.
 */
final class CutProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int target;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;
    private volatile boolean closed;
    private final AtomicLong toTarget = new AtomicLong();

    CutProxy(int targetPort) throws IOException {
        this.target = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "cut-proxy-" + targetPort);
        t.setDaemon(true);
        t.start();
    }

    int port() {
        return server.getLocalPort();
    }

    private void accept() {
        while (!closed) {
            Socket in;
            try {
                in = server.accept();
            } catch (IOException e) {
                return;
            }
            if (cut) {
                abort(in);
                continue;
            }
            try {
                Socket out = new Socket();
                out.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), target), 5000);
                in.setTcpNoDelay(true);
                out.setTcpNoDelay(true);
                open.add(in);
                open.add(out);
                pump(in, out, true);
                pump(out, in, false);
            } catch (IOException e) {
                abort(in);
            }
        }
    }

    private void pump(Socket from, Socket to, boolean towardTarget) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try (InputStream i = from.getInputStream(); OutputStream o = to.getOutputStream()) {
                for (int n = i.read(buf); n >= 0; n = i.read(buf)) {
                    o.write(buf, 0, n);
                    if (towardTarget) {
                        toTarget.addAndGet(n);
                    }
                }
            } catch (IOException e) {
                // cut, reset or closed
            } finally {
                abort(from);
                abort(to);
            }
        }, "cut-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Closes with a reset (RST), as a dropped network path or a crashed middlebox does. */
    private void abort(Socket s) {
        open.remove(s);
        try {
            s.setSoLinger(true, 0);
        } catch (IOException e) {
            // already closed
        }
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    /** Bytes forwarded to the node behind the proxy so far. */
    long bytesToTarget() {
        return toTarget.get();
    }

    /** A partition: resets every connection and refuses new ones until {@link #heal()}. */
    void cut() {
        cut = true;
        reset();
    }

    void heal() {
        cut = false;
    }

    /** Resets every connection it carries now (new ones are accepted). */
    void reset() {
        for (Socket s : open) {
            abort(s);
        }
    }

    @Override
    public void close() {
        closed = true;
        reset();
        try {
            server.close();
        } catch (IOException e) {
            // closing
        }
    }
}
