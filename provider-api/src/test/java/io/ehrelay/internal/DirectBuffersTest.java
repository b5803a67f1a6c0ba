package io.ehrelay.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

class DirectBuffersTest {

    private static long direct() {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct")) {
                return pool.getMemoryUsed();
            }
        }
        throw new IllegalStateException("no direct pool");
    }

    @Test
    void aDirectBuffer_isFreedAtOnce_viewsAndHeapBuffersAreLeftAlone() {
        assertThat(DirectBuffers.freesAtOnce()).as("this JVM frees direct buffers explicitly").isTrue();
        ByteBuffer b = ByteBuffer.allocateDirect(8 << 20);
        long held = direct();
        DirectBuffers.free(b.slice()); // a view: not its memory to free
        DirectBuffers.free(ByteBuffer.allocate(16));
        DirectBuffers.free(null);
        assertThat(direct()).isEqualTo(held);
        DirectBuffers.free(b);
        assertThat(held - direct()).as("bytes freed").isEqualTo(8 << 20);
    }
}
