package io.ehrelay.internal.discovery;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.InetSocketAddress;
import java.net.MulticastSocket;
import java.net.NetworkInterface;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;

import com.codahale.metrics.Meter;
import io.ehrelay.internal.config.DiscoveryConfig;
import io.ehrelay.spi.Clock;
import io.ehrelay.spi.HeartbeatFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Automatic peer discovery: every node multicasts a small heartbeat naming its transport and endpoint, at most
 * {@value #MAX_PACKET} bytes whatever the number of caches (docs/wire-format.md, "Heartbeats"), and listens for
 * the others'. One daemon thread sends and receives; malformed packets are counted ({@code malformedHeartbeats})
 * and ignored. {@link #start()} once, {@link #stop()} once (it closes the sockets).
 */
public final class MulticastHeartbeat {

    static final int MAGIC = 0x45485242;
    static final int MAX_PACKET = 512;
    private static final Logger LOG = LoggerFactory.getLogger(MulticastHeartbeat.class);

    private final DiscoveryConfig config;
    private final String transport;
    private final Supplier<String> localEndpoint;
    private final PeerDirectory directory;
    private final ThreadFactory threads;
    private final Meter malformed;
    private final HeartbeatFormat format;
    private final Clock clock;
    private final UUID nodeId = UUID.randomUUID();
    private volatile boolean running;
    private MulticastSocket receiver;
    private MulticastSocket sender;
    private Thread thread;
    private NetworkInterface nic;

    public MulticastHeartbeat(DiscoveryConfig config, String transport, Supplier<String> localEndpoint,
                              PeerDirectory directory, ThreadFactory threads, Meter malformed) {
        this(config, transport, localEndpoint, directory, threads, malformed, null, Clock.SYSTEM);
    }

    /**
     * @param format the transport's own heartbeat format, or {@code null} for ehrelay's
     * @param clock  when to send the next heartbeat and when a silent peer expires
     */
    public MulticastHeartbeat(DiscoveryConfig config, String transport, Supplier<String> localEndpoint,
                              PeerDirectory directory, ThreadFactory threads, Meter malformed,
                              HeartbeatFormat format, Clock clock) {
        this.format = format;
        this.clock = clock;
        this.config = config;
        this.transport = transport;
        this.localEndpoint = localEndpoint;
        this.directory = directory;
        this.threads = threads;
        this.malformed = malformed;
    }

    public void start() throws IOException {
        InetSocketAddress group = new InetSocketAddress(config.groupAddress(), config.groupPort());
        nic = config.multicastInterface() == null ? null
                : NetworkInterface.getByInetAddress(config.multicastInterface());
        if (config.multicastInterface() != null && nic == null) {
            throw new IOException("hostName " + config.multicastInterface() + " is not an address of this machine");
        }
        receiver = new MulticastSocket(group);
        if (nic != null) {
            receiver.setNetworkInterface(nic);
        }
        receiver.joinGroup(group, nic);
        receiver.setSoTimeout((int) Math.max(10, config.heartbeatIntervalMillis()));
        sender = new MulticastSocket(new InetSocketAddress(
                config.multicastInterface() == null ? null : config.multicastInterface(), 0));
        if (nic != null) {
            sender.setNetworkInterface(nic);
        }
        sender.setTimeToLive(config.timeToLive());
        running = true;
        thread = threads.newThread(this::run);
        thread.start();
    }

    private void run() {
        byte[] buf = new byte[(format == null ? MAX_PACKET : format.maxPacketBytes()) + 1];
        long interval = config.heartbeatIntervalMillis() * 1_000_000L;
        long nextSend = clock.nanoTime();
        while (running) {
            long now = clock.nanoTime();
            if (now - nextSend >= 0) {
                send();
                directory.expire(now);
                nextSend = now + interval;
            }
            try {
                receiver.setSoTimeout((int) Math.max(1, (nextSend - clock.nanoTime()) / 1_000_000L));
                DatagramPacket p = new DatagramPacket(buf, buf.length);
                receiver.receive(p);
                onPacket(p.getData(), p.getLength());
            } catch (SocketTimeoutException e) {
                // time to send again
            } catch (IOException e) {
                if (running) {
                    LOG.warn("ehrelay: multicast heartbeat receive failed: {}", e.toString());
                }
            }
        }
    }

    private void send() {
        String endpoint = localEndpoint.get();
        if (endpoint == null) {
            return;
        }
        List<byte[]> packets = format == null ? Collections.singletonList(encode(nodeId, transport, endpoint)) : format.encode(endpoint);
        try {
            for (byte[] packet : packets) {
                sender.send(new DatagramPacket(packet, packet.length, config.groupAddress(), config.groupPort()));
            }
        } catch (IOException | RuntimeException e) {
            if (running) {
                LOG.warn("ehrelay: multicast heartbeat send to {}:{} failed: {}", config.groupAddress(),
                        config.groupPort(), e.toString());
            }
        }
    }

    static byte[] encode(UUID id, String transport, String endpoint) {
        byte[] t = transport.getBytes(StandardCharsets.UTF_8);
        byte[] e = endpoint.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + 16 + 1 + t.length + 2 + e.length);
        b.putInt(MAGIC).put((byte) 1).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits());
        b.put((byte) t.length).put(t).putShort((short) e.length).put(e);
        if (b.capacity() > MAX_PACKET) {
            throw new IllegalArgumentException("endpoint too long for a heartbeat: " + endpoint);
        }
        return b.array();
    }

    void onPacket(byte[] data, int length) {
        if (format != null) {
            List<String> heard;
            try {
                if (length > format.maxPacketBytes()) {
                    throw new IllegalArgumentException("packet of " + length + " bytes");
                }
                heard = format.decode(data, length);
            } catch (RuntimeException e) {
                malformed.mark();
                return;
            }
            long now = clock.nanoTime();
            for (String endpoint : heard) {
                directory.heard(endpoint, now);
            }
            return;
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(data, 0, length);
            if (length > MAX_PACKET || b.getInt() != MAGIC || b.get() != 1) {
                malformed.mark();
                return;
            }
            UUID id = new UUID(b.getLong(), b.getLong());
            int tl = b.get() & 0xff;
            if (tl > b.remaining()) {
                malformed.mark();
                return;
            }
            String t = new String(data, b.position(), tl, StandardCharsets.UTF_8);
            b.position(b.position() + tl);
            int el = b.getShort() & 0xffff;
            if (el != b.remaining() || el == 0) {
                malformed.mark();
                return;
            }
            String endpoint = new String(data, b.position(), el, StandardCharsets.UTF_8);
            if (!id.equals(nodeId) && t.equals(transport)) {
                directory.heard(endpoint, clock.nanoTime());
            }
        } catch (RuntimeException e) {
            malformed.mark();
        }
    }

    public void stop() {
        running = false;
        if (receiver != null) {
            try {
                receiver.leaveGroup(new InetSocketAddress(config.groupAddress(), config.groupPort()), nic);
            } catch (IOException | RuntimeException e) {
                LOG.debug("leaving multicast group: {}", e.toString());
            }
            receiver.close();
        }
        if (sender != null) {
            sender.close();
        }
        if (thread != null) {
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
