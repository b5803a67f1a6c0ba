package io.ehrelay.tcp;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

/** What the TCP tests that speak to a node's port themselves share: its address, frames, and seeing it close. */
final class TcpWire {

    private TcpWire() {
    }

    /** A node's listening address from its endpoint ({@code host:port}). */
    static InetSocketAddress address(String endpoint) {
        int colon = endpoint.lastIndexOf(':');
        return new InetSocketAddress(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1)));
    }

    /** One frame: header and body. */
    static byte[] frame(Frames.Type type, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(Frames.HEADER_BYTES + body.length);
        Frames.writeHeader(b, type, 0, body.length);
        b.put(body);
        return b.array();
    }

    /**
     * True when the node closed the connection (read sees end of stream or a reset) within {@code timeoutMillis};
     * anything the node sent before is skipped.
     */
    static boolean closedByPeer(Socket s, int timeoutMillis) throws IOException {
        s.setSoTimeout(timeoutMillis);
        InputStream in = s.getInputStream();
        byte[] skipped = new byte[1024];
        try {
            while (in.read(skipped) != -1) {
                // not a close yet
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (SocketException e) {
            return true;
        }
    }
}
