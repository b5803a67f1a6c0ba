package io.ehrelay.tcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

class FramesTest {

    @Test
    void frameHeader_validatesMagicVersionTypeAndLength() throws Exception {
        ByteBuffer ok = Frames.header(Frames.Type.EVENTS_ACK, 77, 1000);
        Frames.Header h = Frames.readHeader(ok, 4096);
        assertThat(h.type()).isEqualTo(Frames.Type.EVENTS_ACK);
        assertThat(h.correlationId()).isEqualTo(77);
        assertThat(h.bodyLength()).isEqualTo(1000);

        ByteBuffer badMagic = Frames.header(Frames.Type.EVENTS, 1, 10);
        badMagic.put(0, (byte) 0);
        assertThatThrownBy(() -> Frames.readHeader(badMagic, 4096)).hasMessageContaining("magic");
        ByteBuffer badType = Frames.header(Frames.Type.EVENTS, 1, 10);
        badType.put(3, (byte) 99);
        assertThatThrownBy(() -> Frames.readHeader(badType, 4096)).hasMessageContaining("frame type");
        ByteBuffer multiGb = Frames.header(Frames.Type.EVENTS, 1, 10);
        multiGb.putInt(12, 0xC0000000);
        assertThatThrownBy(() -> Frames.readHeader(multiGb, 4096)).hasMessageContaining("maxFrameBytes");
        ByteBuffer tooLong = Frames.header(Frames.Type.EVENTS, 1, 5000);
        assertThatThrownBy(() -> Frames.readHeader(tooLong, 4096)).hasMessageContaining("maxFrameBytes");
    }
}
