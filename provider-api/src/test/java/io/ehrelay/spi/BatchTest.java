package io.ehrelay.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
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

    /** Records each write a stream is given, and the array it came in. */
    private static final class Writes extends OutputStream {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final List<byte[]> arrays = new ArrayList<>();
        final List<Integer> offsets = new ArrayList<>();

        @Override
        public void write(int b) {
            throw new AssertionError("a batch is written in bulk");
        }

        @Override
        public void write(byte[] b, int off, int len) {
            arrays.add(b);
            offsets.add(off);
            bytes.write(b, off, len);
        }
    }

    @Test
    void writeTo_givesAHeapBatchItsOwnArrayInOneWrite_andStagesADirectOneThroughScratch() throws Exception {
        byte[] backing = new byte[100];
        for (int i = 0; i < backing.length; i++) {
            backing[i] = (byte) (i * 7);
        }
        // the batch sits at 10..90 of a larger array, as a sink's view of what was written can
        ByteBuffer heap = ByteBuffer.wrap(backing, 10, 80).slice();
        Batch onHeap = new Batch(heap, 2).withDeadline(1L);
        byte[] scratch = new byte[16];
        Writes w = new Writes();
        onHeap.writeTo(w, scratch);
        assertEquals(1, w.arrays.size());
        assertSame(backing, w.arrays.get(0));
        assertEquals(10, (int) w.offsets.get(0));
        assertArrayEquals(Arrays.copyOfRange(backing, 10, 90), w.bytes.toByteArray());

        ByteBuffer direct = ByteBuffer.allocateDirect(80);
        direct.put(backing, 10, 80).flip();
        Batch inDirect = new Batch(direct, 2);
        Writes d = new Writes();
        inDirect.writeTo(d, scratch);
        assertEquals(5, d.arrays.size(), "80 bytes through a scratch of 16");
        for (byte[] a : d.arrays) {
            assertSame(scratch, a);
        }
        assertArrayEquals(Arrays.copyOfRange(backing, 10, 90), d.bytes.toByteArray());
        assertEquals(0, direct.position(), "the batch is not moved");

        // a read-only view exposes no array: written as direct memory is, with the same bytes
        Batch readOnly = new Batch(ByteBuffer.wrap(backing, 10, 80).slice().asReadOnlyBuffer(), 2);
        Writes r = new Writes();
        readOnly.writeTo(r, scratch);
        assertTrue(r.arrays.stream().allMatch(a -> a == scratch));
        assertArrayEquals(Arrays.copyOfRange(backing, 10, 90), r.bytes.toByteArray());
    }

    private static byte[] concat(Batch.Pieces p) {
        byte[] out = new byte[p.length()];
        int at = 0;
        for (int i = 0; i < p.count(); i++) {
            System.arraycopy(p.array(i), p.offset(i), out, at, p.length(i));
            at += p.length(i);
        }
        assertEquals(p.length(), at);
        return out;
    }

    @Test
    void pieces_areTheReferencedValuesThemselves_andOneCopyOfEveryOtherByte() {
        byte[] v1 = new byte[100];
        byte[] v2 = new byte[50];
        Arrays.fill(v1, (byte) 7);
        Arrays.fill(v2, (byte) 9);
        ByteBuffer direct = ByteBuffer.allocateDirect(400);
        byte[] expected = new byte[200];
        for (int i = 0; i < expected.length; i++) {
            expected[i] = (byte) (i * 31);
        }
        System.arraycopy(v1, 0, expected, 10, 100);
        System.arraycopy(v2, 0, expected, 110, 50); // right after v1: no bytes between them
        direct.put(expected).flip();
        Batch batch = new Batch(direct, 2, new int[] {10, 110}, new byte[][] {v1, v2}, 2);

        Batch.Pieces p = batch.pieces();
        assertArrayEquals(expected, concat(p));
        assertEquals(4, p.count(), "before v1, v1, v2, after v2");
        assertSame(v1, p.array(1));
        assertSame(v2, p.array(2));
        assertSame(p.array(0), p.array(3), "the bytes between values share one array");
        assertEquals(50, p.array(0).length, "that array holds only what the values do not: 200 - 150 bytes");
        assertSame(p, batch.withDeadline(1).pieces(), "made once for every peer");

        // the dispatcher reuses its buffer once the sends completed: the pieces do not change with it
        direct.clear();
        direct.put(new byte[400]);
        assertArrayEquals(expected, concat(batch.pieces()));
    }

    @Test
    void aBatchWithoutReferences_isOnePiece_itsArray() {
        Batch batch = new Batch(new byte[] {1, 2, 3}, 1);
        Batch.Pieces p = batch.pieces();
        assertEquals(1, p.count());
        assertSame(batch.toByteArray(), p.array(0));
        assertEquals(3, p.length());
    }

    @Test
    void aValueAtTheVeryStartOrEnd_leavesNoEmptyPiece() {
        byte[] v = {5, 5, 5, 5};
        Batch batch = new Batch(ByteBuffer.wrap(new byte[] {5, 5, 5, 5, 1, 5, 5, 5, 5}), 2, new int[] {0, 5},
                new byte[][] {v, v}, 2);
        Batch.Pieces p = batch.pieces();
        assertEquals(3, p.count());
        assertArrayEquals(new byte[] {5, 5, 5, 5, 1, 5, 5, 5, 5}, concat(p));
    }

    @Test
    void aReferenceOutsideTheBatchOrOverlappingAnother_isRefused() {
        byte[] v = new byte[4];
        ByteBuffer b = ByteBuffer.allocate(10);
        assertThrows(IllegalArgumentException.class,
                () -> new Batch(b, 1, new int[] {8}, new byte[][] {v}, 1), "runs past the end");
        assertThrows(IllegalArgumentException.class,
                () -> new Batch(b, 2, new int[] {0, 2}, new byte[][] {v, v}, 2), "overlaps");
        assertThrows(IllegalArgumentException.class,
                () -> new Batch(b, 1, new int[] {-1}, new byte[][] {v}, 1), "before the start");
    }
}
