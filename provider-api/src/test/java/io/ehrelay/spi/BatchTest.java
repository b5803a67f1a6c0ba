package io.ehrelay.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

class BatchTest {

    @Test
    void toByteArray_isOneCopySharedByEveryPeerAndDeadlineView() throws Exception {
        ByteBuffer direct = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < 40; i++) {
            direct.put((byte) i);
        }
        direct.flip();
        Batch batch = new Batch(direct, 3);
        Batch withDeadline = batch.withDeadline(System.nanoTime() + 1_000_000);

        // seven peers' senders ask at once: one array for all of them
        List<byte[]> seen = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> senders = new ArrayList<>();
        for (int p = 0; p < 7; p++) {
            Batch view = p % 2 == 0 ? batch : withDeadline;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    return;
                }
                byte[] a = view.toByteArray();
                synchronized (seen) {
                    seen.add(a);
                }
            });
            t.start();
            senders.add(t);
        }
        start.countDown();
        for (Thread t : senders) {
            t.join();
        }
        assertEquals(7, seen.size());
        for (byte[] a : seen) {
            assertSame(seen.get(0), a);
        }
        byte[] expected = new byte[40];
        for (int i = 0; i < 40; i++) {
            expected[i] = (byte) i;
        }
        assertArrayEquals(expected, seen.get(0));

        // the dispatcher reuses its buffer once the sends completed: the copy does not change with it
        direct.clear();
        direct.put(new byte[64]);
        assertArrayEquals(expected, batch.toByteArray());
        assertEquals(40, batch.length());
    }
}
