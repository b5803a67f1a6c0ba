package io.ehrelay.internal.codec;

import java.util.Collections;

/**
 * Bounds the decoder enforces on every frame before it allocates: the largest frame, and for Java-serialized
 * values the object graph depth, array length, number of references and the allow-list. Immutable.
 */
public final class CodecLimits {

    public static final int DEFAULT_MAX_FRAME_BYTES = 64 << 20;
    public static final int DEFAULT_MAX_DEPTH = 64;
    public static final int DEFAULT_MAX_ARRAY_LENGTH = 16_777_216;
    public static final long DEFAULT_MAX_REFERENCES = 1_000_000;

    private final int maxFrameBytes;
    private final int maxDepth;
    private final int maxArrayLength;
    private final long maxReferences;
    private final AllowList allowList;

    public CodecLimits(int maxFrameBytes, int maxDepth, int maxArrayLength, long maxReferences, AllowList allowList) {
        this.maxFrameBytes = maxFrameBytes;
        this.maxDepth = maxDepth;
        this.maxArrayLength = maxArrayLength;
        this.maxReferences = maxReferences;
        this.allowList = allowList;
    }

    /** The defaults of {@code NodeConfig}: 64 MiB frames, depth 64, 16 Mi array elements, JDK value types. */
    public static CodecLimits defaults() {
        return new CodecLimits(DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_ARRAY_LENGTH,
                DEFAULT_MAX_REFERENCES, AllowList.withDefaults(java.util.Collections.emptyList()));
    }

    public int maxFrameBytes() { return maxFrameBytes; }
    public int maxDepth() { return maxDepth; }
    public int maxArrayLength() { return maxArrayLength; }
    public long maxReferences() { return maxReferences; }
    public AllowList allowList() { return allowList; }
}
