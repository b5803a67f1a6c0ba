package io.ehrelay.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.zip.CRC32;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The replay's profile of the timed window ({@link WindowProfile}), with async-profiler itself. */
class WindowProfileTest {

    @TempDir
    Path dir;

    @AfterEach
    void clear() {
        System.clearProperty(WindowProfile.PROPERTY);
        WindowProfile.stop();
    }

    @Test
    void aSpecWithoutItsThreeParts_isRefusedNamingTheProperty() {
        System.setProperty(WindowProfile.PROPERTY, "/some/libasyncProfiler.so|event=cpu");
        assertThatThrownBy(WindowProfile::start).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(WindowProfile.PROPERTY).hasMessageContaining("<library>|<start options>");
    }

    @Test
    void profilesFromStartToStop_andWritesTheStopOptionsFile() throws Exception {
        Path lib = dir.resolve("libasyncProfiler.so");
        try (InputStream in = getClass().getClassLoader().getResourceAsStream("linux-x64/libasyncProfiler.so")) {
            assertThat(in).as("async-profiler's library in its jar").isNotNull();
            Files.copy(in, lib, StandardCopyOption.REPLACE_EXISTING);
        }
        Path out = dir.resolve("window.collapsed");
        System.setProperty(WindowProfile.PROPERTY, lib + "|event=itimer,interval=1ms|file=" + out + ",collapsed");

        WindowProfile.start();
        long sum = busyInTheWindow(400_000_000L);
        WindowProfile.stop();

        assertThat(sum).isNotZero();
        assertThat(out).exists();
        assertThat(Files.readString(out)).as("the samples of the window")
                .contains("WindowProfileTest.busyInTheWindow");
        // stopped: a second stop writes nothing more and does not fail
        Files.delete(out);
        WindowProfile.stop();
        assertThat(out).doesNotExist();
    }

    /** CPU work of about {@code nanos}, in a method the profile names. */
    private static long busyInTheWindow(long nanos) {
        byte[] data = new byte[64 * 1024];
        CRC32 crc = new CRC32();
        long sum = 0;
        for (long end = System.nanoTime() + nanos; System.nanoTime() < end; ) {
            crc.update(data, 0, data.length);
            sum += crc.getValue();
            data[(int) (sum & 0xffff)]++;
        }
        return sum;
    }
}
