package io.ehrelay.hessian;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.replay.Attacker;
import io.ehrelay.spi.ClusterSecret;

/**
 * What the attacker suite sends to a Hessian node itself: sessions opened with the cluster secret (an insider)
 * and relay calls under them. In this package for the wire format.
 */
public final class HessianAttacks {

    private HessianAttacks() {
    }

    /** Opens a session at {@code url} under {@code name}. */
    public static RpcSessions.Credentials session(String url, String secret, String name) throws IOException {
        return RpcSessions.open(ClusterSecret.of(secret), name, new RpcSessions.Listener() {
            @Override
            public byte[] challenge() throws IOException {
                return HessianWire.readBinaryReply(call(url, "challenge", Envelope.of(name, null), null));
            }

            @Override
            public byte[] authenticate(byte[] challenge, byte[] response) throws IOException {
                byte[] both = Arrays.copyOf(challenge, challenge.length + response.length);
                System.arraycopy(response, 0, both, challenge.length, response.length);
                return HessianWire.readBinaryReply(call(url, "authenticate", Envelope.of(name, both), null));
            }
        });
    }

    /** Posts {@code batch} under {@code session}; returns the HTTP status. */
    public static int post(String url, byte[] session, String name, byte[] batch) throws IOException {
        HttpURLConnection c = connection(url, HessianWire.call("post", Envelope.of(name, batch)), session);
        int status = c.getResponseCode();
        InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
        if (in != null) {
            in.readAllBytes(); // so that the connection can be reused
            in.close();
        }
        return status;
    }

    private static byte[] call(String url, String method, Envelope e, byte[] session) throws IOException {
        HttpURLConnection c = connection(url, HessianWire.call(method, e), session);
        int status = c.getResponseCode();
        InputStream in = status < 400 ? c.getInputStream() : c.getErrorStream();
        byte[] answer = in == null ? new byte[0] : in.readAllBytes();
        if (in != null) {
            in.close();
        }
        if (status != 200) {
            throw new IOException("HTTP " + status);
        }
        return answer;
    }

    private static HttpURLConnection connection(String url, byte[] body, byte[] session) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        c.setRequestMethod("POST");
        c.setDoOutput(true);
        c.setFixedLengthStreamingMode(body.length);
        if (session != null) {
            c.setRequestProperty(HessianSettings.SESSION_HEADER, Base64.getEncoder().encodeToString(session));
        }
        try (OutputStream out = c.getOutputStream()) {
            out.write(body);
        }
        return c;
    }

    /** The start of a well-formed post of a batch of {@code batchBytes} bytes: {announced length, first bytes}. */
    public static Object[] postPrefix(String name, int batchBytes, int prefixBytes) throws IOException {
        byte[] whole = HessianWire.call("post", Envelope.of(name, new byte[batchBytes]));
        return new Object[] {whole.length, Arrays.copyOf(whole, prefixBytes)};
    }

    /**
     * Opens a connection that posts a body announced as {@code announced} bytes under {@code session} and sends
     * {@code sent} of them; the socket stays open (the caller closes it).
     */
    public static Socket partialPost(int port, byte[] session, int announced, byte[] sent)
            throws IOException {
        Socket s = new Socket();
        s.connect(new InetSocketAddress(Attacker.target(), port), 2000);
        OutputStream out = s.getOutputStream();
        String head = "POST /ehrelay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-hessian\r\n"
                + HessianSettings.SESSION_HEADER + ": " + Base64.getEncoder().encodeToString(session) + "\r\n"
                + "Content-Length: " + announced + "\r\n\r\n";
        out.write(head.getBytes(StandardCharsets.US_ASCII));
        try {
            out.write(sent);
            out.flush();
        } catch (IOException e) {
            // the node answered and closed: say what it answered
            s.setSoTimeout(2000);
            byte[] line = new byte[64];
            int n = s.getInputStream().read(line);
            s.close();
            throw new IOException("closed by the node: " + (n > 0 ? new String(line, 0, n,
                    StandardCharsets.US_ASCII).split("\r\n")[0] : "no answer"), e);
        }
        return s;
    }

    /**
     * Sends up to {@code count} of the smallest calls a node answers without a session (a challenge), pipelined
     * on one connection for at most {@code maxMillis}, while a thread reads the answers. Returns
     * {sent, bytes answered}.
     */
    public static long[] challengeFlood(int port, int count, long maxMillis) throws Exception {
        byte[] body = HessianWire.call("challenge", Envelope.of("flood", null));
        byte[] request = concat(("POST /ehrelay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + body.length
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII), body);
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(Attacker.target(), port), 2000);
            long[] answered = new long[1];
            InputStream in = s.getInputStream();
            Thread reader = new Thread(() -> {
                byte[] buf = new byte[1 << 16];
                try {
                    for (int n = in.read(buf); n > 0; n = in.read(buf)) {
                        answered[0] += n;
                    }
                } catch (IOException e) {
                    // closed
                }
            }, "flood-answers");
            reader.setDaemon(true);
            reader.start();
            OutputStream out = new BufferedOutputStream(s.getOutputStream(), 1 << 16);
            long until = System.nanoTime() + maxMillis * 1_000_000L;
            long sent = 0;
            try {
                while (sent < count && ((sent & 1023) != 0 || System.nanoTime() < until)) {
                    out.write(request);
                    sent++;
                }
                out.flush();
            } catch (IOException e) {
                // closed by the node
            }
            Thread.sleep(1000);
            return new long[] {sent, answered[0]};
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
