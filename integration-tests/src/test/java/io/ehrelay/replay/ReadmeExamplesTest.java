package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.ehrelay.testing.SocketAudit;
import net.sf.ehcache.Cache;
import net.sf.ehcache.CacheManager;
import net.sf.ehcache.Element;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every complete {@code ehcache.xml} of the README's quick start, as a newcomer would copy it: two nodes from
 * the file (the other node's with the addresses swapped), on 127.0.0.1 instead of the example addresses and on
 * free ports instead of 40001 / 7800, must replicate a put.
 */
@Timeout(120)
class ReadmeExamplesTest {

    static Stream<String> examples() throws Exception {
        String readme = Files.readString(ReferenceDocsTest.ROOT.resolve("README.md"));
        List<String> out = new ArrayList<>();
        int from = 0;
        while (true) {
            int start = readme.indexOf("```xml\n<ehcache", from);
            if (start < 0) {
                break;
            }
            int end = readme.indexOf("```", start + 6);
            out.add(readme.substring(start + 7, end));
            from = end + 3;
        }
        assertThat(out).as("the README's ehcache.xml examples").hasSize(4);
        return out.stream();
    }

    @ParameterizedTest
    @MethodSource("examples")
    void theReadmesEhcacheXml_replicatesBetweenTwoNodes(String example) throws Exception {
        int portA = ReplayNode.freePort();
        int portB = ReplayNode.freePort();
        assertThat(example).contains("10.0.0.1").contains("10.0.0.2");
        CacheManager a = null;
        CacheManager b = null;
        SocketAudit before = SocketAudit.self();
        try {
            a = new CacheManager(stream(localize(example, "node-a", "10.0.0.1", "10.0.0.2", portA, portB)));
            String swapped = example.replace("10.0.0.1", "10.0.0.X").replace("10.0.0.2", "10.0.0.1")
                    .replace("10.0.0.X", "10.0.0.2");
            b = new CacheManager(stream(localize(swapped, "node-b", "10.0.0.2", "10.0.0.1", portB, portA)));
            Cache writer = a.getCache("users");
            Cache reader = b.getCache("users");
            assertThat(writer).as("the example's cache").isNotNull();
            long deadline = System.nanoTime() + 60_000_000_000L;
            int i = 0;
            while (reader.get("alice") == null && System.nanoTime() < deadline) {
                writer.put(new Element("alice", "put " + i++));
                Thread.sleep(100);
            }
            assertThat(reader.get("alice")).as("the put replicated to the other node").isNotNull();
            // every socket both nodes listen on is at the address the file names (127.0.0.1 here): the JDK's and
            // JGroups' listeners included; no multicast group joined beyond lo
            SocketAudit during = SocketAudit.self();
            assertThat(during.violations(before)).as("listeners beyond the example's address: %s", during.describe())
                    .isEmpty();
        } finally {
            if (b != null) {
                b.shutdown();
            }
            if (a != null) {
                a.shutdown();
            }
        }
    }

    /**
     * The example as node {@code name}: its own address {@code ownIp} listening on {@code own}, its peer
     * {@code peerIp} on {@code peer}, both on 127.0.0.1; a JGroups channel also binds {@code own} and is named
     * after the pair.
     */
    private static String localize(String xml, String name, String ownIp, String peerIp, int own, int peer) {
        String s = xml.replace("name=\"node-a\"", "name=\"" + name + "\"")
                .replace(peerIp + ":40001", peerIp + ":" + peer)
                .replace("port=40001", "port=" + own)
                .replace(ownIp + "[7800]", ownIp + "[" + own + "]")
                .replace(peerIp + "[7800]", peerIp + "[" + peer + "]")
                .replace("channelName=app", "channelName=readme-" + Math.min(own, peer) + "::bindPort=" + own);
        return s.replace("10.0.0.1", "127.0.0.1").replace("10.0.0.2", "127.0.0.1");
    }

    private static ByteArrayInputStream stream(String xml) {
        return new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8));
    }
}
