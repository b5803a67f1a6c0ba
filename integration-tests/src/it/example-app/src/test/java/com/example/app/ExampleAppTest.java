package com.example.app;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.ServerSocket;

import org.junit.jupiter.api.Test;

/** Two nodes of the example application on 127.0.0.1: a put on one is read on the other. */
class ExampleAppTest {

    @Test
    void aPutOnOneNodeIsReadOnTheOther() throws Exception {
        int portA = freePort();
        int portB = freePort();
        try (ExampleApp a = new ExampleApp("example-a", "127.0.0.1", portA, "127.0.0.1:" + portB);
             ExampleApp b = new ExampleApp("example-b", "127.0.0.1", portB, "127.0.0.1:" + portA)) {
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (b.get("alice") == null && System.nanoTime() < deadline) {
                a.put("alice", "Alice Liddell");
                Thread.sleep(100);
            }
            assertEquals("Alice Liddell", b.get("alice"));
            assertEquals(1, a.peers());
            assertEquals(1, b.peers());
        }
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
