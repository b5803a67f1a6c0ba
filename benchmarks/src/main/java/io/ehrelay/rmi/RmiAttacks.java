package io.ehrelay.rmi;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.rmi.registry.LocateRegistry;

import io.ehrelay.internal.rpc.RpcSessions;
import io.ehrelay.replay.Attacker;
import io.ehrelay.spi.ClusterSecret;

/**
 * What the attacker suite sends to an RMI node itself: sessions opened with the cluster secret (an insider),
 * batches that stop in the middle, and JRMP pings. In this package for the relay's batch type.
 */
public final class RmiAttacks {

    private RmiAttacks() {
    }

    /** The node's relay, looked up in its registry on 127.0.0.1. */
    public static RelayRemote relay(int registryPort) throws Exception {
        return (RelayRemote) LocateRegistry.getRegistry(Attacker.target(), registryPort).lookup(RelayRemote.BINDING);
    }

    /** A session opened under {@code name} with {@code secret}. */
    public static RpcSessions.Credentials session(RelayRemote relay, String secret, String name)
            throws IOException {
        return RmiPeerChannel.openSession(relay, ClusterSecret.of(secret), name);
    }

    /** Posts {@code batch} under {@code session} (a credential of the session's). */
    public static void post(RelayRemote relay, String name, byte[] session, byte[] batch) throws IOException {
        relay.post(new RelayBatch(name, session, batch));
    }

    /**
     * Posts a batch announcing {@code announced} bytes, sends {@code sent} of them and stops for
     * {@code stallMillis}; the call then fails.
     */
    public static void stalledPost(RelayRemote relay, String name, byte[] session, byte[] sent, int announced,
                                   long stallMillis) throws IOException {
        relay.post(RelayBatch.stalling(name, session, sent, announced, stallMillis));
    }

    /**
     * Opens a JRMP connection to {@code port} (the stream protocol's header) and sends {@code count} pings, one
     * byte each, while a thread reads the acknowledgements. Returns how many acknowledgements came back.
     */
    public static long pings(int port, int count) throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(Attacker.target(), port), 2000);
            s.setSoTimeout(30_000);
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(),
                    1 << 16));
            out.writeInt(0x4a524d49); // "JRMI"
            out.writeShort(2);
            out.writeByte(0x4b); // the stream protocol
            out.flush();
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            if (in.readByte() != 0x4e) {
                throw new IOException("no protocol acknowledgement");
            }
            in.readUTF();
            in.readInt();
            out.writeUTF("127.0.0.1");
            out.writeInt(0);
            long[] acks = new long[1];
            Thread reader = new Thread(() -> {
                byte[] buf = new byte[1 << 16];
                try {
                    InputStream raw = in;
                    while (acks[0] < count) {
                        int n = raw.read(buf);
                        if (n <= 0) {
                            break;
                        }
                        acks[0] += n; // each acknowledgement is one byte
                    }
                } catch (IOException e) {
                    // closed
                }
            }, "ping-acks");
            reader.setDaemon(true);
            reader.start();
            for (int i = 0; i < count; i++) {
                out.writeByte(0x52);
            }
            out.flush();
            reader.join(30_000);
            return acks[0];
        }
    }
}
