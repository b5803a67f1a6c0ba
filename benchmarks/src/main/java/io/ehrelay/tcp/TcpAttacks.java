package io.ehrelay.tcp;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import io.ehrelay.replay.Attacker;
import io.ehrelay.spi.ClusterSecret;

/**
 * What the attacker suite sends to a TCP node's port itself: the handshake of a peer that holds the cluster
 * secret (an insider), and raw frames. In this package for the wire format's constants.
 */
public final class TcpAttacks {

    private TcpAttacks() {
    }

    /** A connection to {@code 127.0.0.1:port} that proved {@code secret} under the name {@code name}. */
    public static Socket insider(int port, String secret, String name) throws IOException {
        Socket s = new Socket();
        try {
            s.connect(new InetSocketAddress(Attacker.target(), port), 2000);
            s.setSoTimeout(10_000);
            ClusterSecret cs = ClusterSecret.of(secret);
            byte[] hello = name.getBytes(StandardCharsets.UTF_8);
            OutputStream out = s.getOutputStream();
            out.write(frame(Frames.Type.HELLO, hello));
            byte[] challenge = read(s, Frames.Type.CHALLENGE);
            byte[] nonce = Arrays.copyOfRange(challenge, 1, 1 + ClusterSecret.NONCE_BYTES);
            byte[] mine = ClusterSecret.nonce();
            byte[] proof = cs.proof(InboundConnection.CLIENT_PROOF, nonce, mine, hello);
            byte[] auth = Arrays.copyOf(mine, mine.length + proof.length);
            System.arraycopy(proof, 0, auth, mine.length, proof.length);
            out.write(frame(Frames.Type.AUTH, auth));
            byte[] answer = read(s, Frames.Type.AUTH);
            if (!cs.verifies(answer, InboundConnection.SERVER_PROOF, mine, nonce)) {
                throw new IOException("the node did not prove the secret back");
            }
            s.setSoTimeout(0);
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** A whole frame. */
    public static byte[] frame(Frames.Type type, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(Frames.HEADER_BYTES + body.length);
        Frames.writeHeader(b, type, 0, body.length);
        b.put(body);
        return b.array();
    }

    /** The header of an event frame announcing {@code length} bytes of body. */
    public static byte[] eventsHeader(int length) {
        ByteBuffer b = ByteBuffer.allocate(Frames.HEADER_BYTES);
        Frames.writeHeader(b, Frames.Type.EVENTS, 0, length);
        return b.array();
    }

    /** An event frame whose body is {@code body}. */
    public static byte[] events(byte[] body) {
        return frame(Frames.Type.EVENTS, body);
    }

    private static byte[] read(Socket s, Frames.Type expected) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] head = new byte[Frames.HEADER_BYTES];
        in.readFully(head);
        ByteBuffer h = ByteBuffer.wrap(head);
        h.getShort();
        h.get();
        int type = h.get();
        h.getLong();
        int length = h.getInt();
        if (type != expected.code() || length < 0 || length > 4096) {
            throw new IOException("expected a " + expected + " frame, got type " + type + " of " + length + " bytes");
        }
        byte[] body = new byte[length];
        in.readFully(body);
        return body;
    }
}
