package io.ehrelay.rmi;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;

import io.ehrelay.spi.HeartbeatFormat;

/**
 * Ehcache's own RMI heartbeat, so that stock and ehrelay RMI nodes discover each other: each packet is the
 * gzip of {@code //host:port/cache|//host:port/cache|…} (at most {@value #PEERS_PER_PACKET} URLs, at most
 * {@value #MTU} bytes, as stock Ehcache sends and reads them). Receiving, every URL names its node's registry
 * endpoint; a packet that does not unzip, unzips to more than {@value #MAX_UNZIPPED} bytes, or holds something
 * that is not an RMI URL is malformed.
 */
final class StockHeartbeatFormat implements HeartbeatFormat {

    static final int MTU = 1500;
    static final int PEERS_PER_PACKET = 150;
    static final int MAX_UNZIPPED = 64 * 1024;

    private final Supplier<List<String>> cacheNames;

    StockHeartbeatFormat(Supplier<List<String>> cacheNames) {
        this.cacheNames = cacheNames;
    }

    @Override
    public int maxPacketBytes() {
        return MTU;
    }

    @Override
    public List<byte[]> encode(String localEndpoint) {
        List<String> urls = new ArrayList<>();
        for (String name : cacheNames.get()) {
            if (name.indexOf('|') < 0) {
                urls.add("//" + localEndpoint + "/" + name);
            }
        }
        List<byte[]> packets = new ArrayList<>();
        for (int i = 0; i < urls.size(); i += PEERS_PER_PACKET) {
            pack(urls.subList(i, Math.min(urls.size(), i + PEERS_PER_PACKET)), packets);
        }
        return packets;
    }

    /** Gzips the URLs into one packet, or halves the list until each half fits the MTU. */
    private static void pack(List<String> urls, List<byte[]> out) {
        byte[] packet = gzip(String.join("|", urls).getBytes(StandardCharsets.UTF_8));
        if (packet.length <= MTU) {
            out.add(packet);
        } else if (urls.size() > 1) {
            pack(urls.subList(0, urls.size() / 2), out);
            pack(urls.subList(urls.size() / 2, urls.size()), out);
        }
        // a single URL that does not fit (an absurdly long cache name) is left out, as stock Ehcache does
    }

    private static byte[] gzip(byte[] data) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(data.length / 2 + 32);
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            gz.write(data);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return bytes.toByteArray();
    }

    @Override
    public List<String> decode(byte[] data, int length) {
        String text = new String(gunzip(data, length), StandardCharsets.UTF_8).trim();
        Set<String> endpoints = new LinkedHashSet<>();
        for (String url : text.split("\\|")) {
            if (!url.trim().isEmpty()) {
                endpoints.add(RmiUrls.endpoint(url));
            }
        }
        if (endpoints.isEmpty()) {
            throw new IllegalArgumentException("heartbeat without URLs");
        }
        return new ArrayList<>(endpoints);
    }

    private static byte[] gunzip(byte[] data, int length) {
        try (InputStream in = new GZIPInputStream(new ByteArrayInputStream(data, 0, length))) {
            ByteArrayOutputStream out = new ByteArrayOutputStream(length * 4);
            byte[] buf = new byte[4096];
            for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                out.write(buf, 0, n);
                if (out.size() > MAX_UNZIPPED) {
                    throw new IllegalArgumentException("heartbeat unzips to more than " + MAX_UNZIPPED + " bytes");
                }
            }
            return out.toByteArray();
        } catch (IOException e) {
            throw new IllegalArgumentException("not a gzip heartbeat: " + e.getMessage());
        }
    }
}
