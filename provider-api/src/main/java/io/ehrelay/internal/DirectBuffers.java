package io.ehrelay.internal;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;

/**
 * Frees a direct buffer's native memory now instead of whenever the garbage collector finds the buffer unreachable:
 * a receive buffer that grows or shrinks leaves its old memory behind until then, beyond the bound the node counts
 * ({@code inboundBufferMaxBytes}). Java 9 and later: {@code sun.misc.Unsafe.invokeCleaner}; Java 8: the buffer's
 * own cleaner. Where neither is reachable, freeing is left to the collector, as before.
 *
 * <p>Only the thread that owns a buffer may free it, once nothing reads or writes it any more: freed memory must
 * not be touched again.
 */
public final class DirectBuffers {

    private static final Freer FREER = freer();

    private DirectBuffers() {
    }

    private interface Freer {
        void free(ByteBuffer buffer) throws Exception;
    }

    /** Frees {@code buffer}'s native memory if it is a direct buffer that owns it (not a slice or duplicate). */
    public static void free(ByteBuffer buffer) {
        if (buffer == null || !buffer.isDirect() || FREER == null) {
            return;
        }
        try {
            FREER.free(buffer);
        } catch (Exception | LinkageError e) {
            // a view of another buffer (Unsafe refuses those), or the JDK moved: the collector frees it
        }
    }

    /** Whether this JVM frees buffers at once (for tests and the start-up log). */
    public static boolean freesAtOnce() {
        return FREER != null;
    }

    private static Freer freer() {
        try {
            Class<?> unsafeType = Class.forName("sun.misc.Unsafe");
            Method invokeCleaner = unsafeType.getMethod("invokeCleaner", ByteBuffer.class);
            Field field = unsafeType.getDeclaredField("theUnsafe");
            field.setAccessible(true);
            Object unsafe = field.get(null);
            return buffer -> invokeCleaner.invoke(unsafe, buffer);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            // Java 8: below
        }
        try {
            Method cleaner = Class.forName("sun.nio.ch.DirectBuffer").getMethod("cleaner");
            Method clean = Class.forName("sun.misc.Cleaner").getMethod("clean");
            return buffer -> {
                Object c = cleaner.invoke(buffer);
                if (c != null) {
                    clean.invoke(c);
                }
            };
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }
}
