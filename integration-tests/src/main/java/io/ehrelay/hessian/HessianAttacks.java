package io.ehrelay.hessian;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.Arrays;
import java.util.Base64;

import io.ehrelay.spi.ClusterSecret;
import io.ehrelay.spi.rpc.RpcSessions;

/**
 * What the attacker suite sends to a Hessian node itself: sessions opened with the cluster secret (an insider)
 * and relay calls under them. In this package for the wire format.
 */
public final class HessianAttacks {

    private HessianAttacks() {
    }

    /** Opens a session at {@code url} under {@code name}. */
    public static byte[] session(String url, String secret, String name) throws IOException {
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
}
