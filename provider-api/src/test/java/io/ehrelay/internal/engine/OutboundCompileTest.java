package io.ehrelay.internal.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;

import org.junit.jupiter.api.Test;

/**
 * {@link Outbound#put} stays one compilation unit of its own: its bytecode is over HotSpot's {@code FreqInlineSize}
 * (325 bytes, the default on every JDK from 8 on), so the JIT does not inline it into Ehcache's listener loop and
 * into each level between them, compiling the put path once per level (see the method's comment and
 * docs/benchmarks.md). A change that shrinks it below the limit fails here: move the saving elsewhere, or measure
 * E2 again with the JIT's compile log.
 */
class OutboundCompileTest {

    private static final int FREQ_INLINE_SIZE = 325;

    @Test
    void thePutPath_isTooBigForHotSpotToInlineIntoItsCallers() throws IOException {
        String descriptor = "(Lio/ehrelay/internal/engine/CacheBinding;Lnet/sf/ehcache/Ehcache;"
                + "Lnet/sf/ehcache/Element;Lio/ehrelay/internal/config/ReplicatorConfig;)V";
        assertThat(codeLength(Outbound.class, "put", descriptor)).as("bytes of Outbound.put's bytecode")
                .isGreaterThan(FREQ_INLINE_SIZE);
    }

    /** The length of a method's bytecode, read from its class file. */
    static int codeLength(Class<?> c, String name, String descriptor) throws IOException {
        try (InputStream raw = c.getResourceAsStream(c.getSimpleName() + ".class");
             DataInputStream in = new DataInputStream(raw)) {
            in.readInt(); // magic
            in.readInt(); // versions
            int count = in.readUnsignedShort();
            String[] utf8 = new String[count];
            for (int i = 1; i < count; i++) {
                int tag = in.readUnsignedByte();
                switch (tag) {
                    case 1:
                        utf8[i] = in.readUTF();
                        break;
                    case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18:
                        in.readInt();
                        break;
                    case 5: case 6:
                        in.readLong();
                        i++; // takes two entries
                        break;
                    case 7: case 8: case 16: case 19: case 20:
                        in.readUnsignedShort();
                        break;
                    case 15:
                        in.readUnsignedByte();
                        in.readUnsignedShort();
                        break;
                    default:
                        throw new IOException("constant pool tag " + tag + " at " + i);
                }
            }
            in.readUnsignedShort(); // access
            in.readUnsignedShort(); // this
            in.readUnsignedShort(); // super
            in.skipBytes(2 * in.readUnsignedShort()); // interfaces
            skipMembers(in); // fields
            int methods = in.readUnsignedShort();
            for (int m = 0; m < methods; m++) {
                in.readUnsignedShort();
                String n = utf8[in.readUnsignedShort()];
                String d = utf8[in.readUnsignedShort()];
                int attributes = in.readUnsignedShort();
                for (int a = 0; a < attributes; a++) {
                    String attribute = utf8[in.readUnsignedShort()];
                    int length = in.readInt();
                    if (name.equals(n) && descriptor.equals(d) && "Code".equals(attribute)) {
                        in.readUnsignedShort(); // max stack
                        in.readUnsignedShort(); // max locals
                        return in.readInt();
                    }
                    in.skipBytes(length);
                }
            }
        }
        throw new AssertionError("no method " + name + descriptor + " in " + c.getName());
    }

    private static void skipMembers(DataInputStream in) throws IOException {
        int members = in.readUnsignedShort();
        for (int m = 0; m < members; m++) {
            in.skipBytes(6);
            int attributes = in.readUnsignedShort();
            for (int a = 0; a < attributes; a++) {
                in.skipBytes(2);
                in.skipBytes(in.readInt());
            }
        }
    }
}
